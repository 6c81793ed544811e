package findings

import (
	"testing"

	"github.com/google/uuid"
)

// resolveAliases takes the head member a finding is under its other
// identity, in both directions, one member to one finding, and leaves
// findings that are members, or are no member's other form, alone.
func TestResolveAliases(t *testing.T) {
	id := func() string { return uuid.NewString() }
	byCode, byMessage := id(), id()   // a finding found first with its file
	bareFirst, withCode := id(), id() // a finding found first without it
	member, stranger, twin := id(), id(), id()
	head := []string{byCode, bareFirst, member}
	aliases := map[string]string{byCode: byMessage}
	issue := func(id, alias string) Issue {
		i := Issue{ID: id, Alias: alias, ProjectID: 1, Branch: "main", FilePath: "a.go", Urgency: "HI", Status: "open"}
		if err := i.Prepare(1, "2026-11-27T00:00:00Z"); err != nil {
			t.Fatal(err)
		}
		return i
	}
	found := []Issue{
		issue(byMessage, ""),       // now without the file: its id is the member's alias
		issue(withCode, bareFirst), // now with the file: its alias is a member
		issue(member, ""),          // a member as it is
		issue(stranger, ""),        // new
		issue(twin, bareFirst),     // claims a member another finding took
	}
	if err := resolveAliases(found, head, aliases); err != nil {
		t.Fatal(err)
	}
	want := []struct{ id, alias string }{{byCode, byMessage}, {bareFirst, withCode}, {member, ""}, {stranger, ""}, {twin, bareFirst}}
	for n, w := range want {
		if found[n].ID != w.id || found[n].Alias != w.alias {
			t.Errorf("finding %d: id %s alias %s, want %s %s", n, found[n].ID, found[n].Alias, w.id, w.alias)
		}
	}
	moved := issue(byCode, "")
	if found[0].Key != moved.Key || found[0].GSI1SK != moved.GSI1SK {
		t.Fatalf("a finding given another id keeps its old keys: %+v, want %+v", found[0].Key, moved.Key)
	}
	if got := Aliases(found); len(got) != 3 || got[byCode] != byMessage || got[bareFirst] != withCode || got[twin] != bareFirst {
		t.Fatalf("Aliases: %v", got)
	}
}

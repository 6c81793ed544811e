package issues_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

// An issue shows the scanner's fix it keeps as the real clients read a
// suggestion: fix_available with the diff, the explanation and the full
// code, under an id derived from the issue's (the same at every read, its
// own per issue); an issue without a fix to show answers null, in the
// single issue and in the lists (the answers match the OpenAPI document:
// testenv checks every one).
func TestAutoFixSuggestion(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	c := env.Company(t, "Fixes")
	p, err := env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: c.ID, Name: "app"})
	if err != nil {
		t.Fatal(err)
	}
	fix := &findings.Fix{Diff: "--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x\n+y\n", Explanation: "Use y", FullCode: "y\n"}
	issue := func(n int, fx *findings.Fix) findings.Issue {
		return findings.Issue{ID: uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(n)}).String(), ProjectID: p.ID, ProjectName: p.Name,
			Branch: "main", CWE: 89, FilePath: "a.go", Line: 1, Urgency: "HI", Status: "open", Title: "t",
			CreatedAt: "2025-03-01T00:00:00Z", Fix: fx}
	}
	batch := []findings.Issue{issue(1, fix), issue(2, fix), issue(3, nil), issue(4, &findings.Fix{Explanation: "no diff"})}
	if _, err := bulkload.CreateIssues(ctx, env.Store, c.ID, batch); err != nil {
		t.Fatal(err)
	}
	h := issues.New(env.Deps)
	suggestion := func(id string) map[string]any {
		t.Helper()
		res := testenv.Do(t, h, "GET", "/issue/"+id, "", testenv.Key(c.Admin)...)
		var body struct{ Issue map[string]any }
		if err := json.Unmarshal(res.Body, &body); err != nil || res.Status != 200 {
			t.Fatalf("GET /issue/%s: %d %s", id, res.Status, res.Body)
		}
		s, present := body.Issue["auto_fix_suggestion"]
		if !present {
			t.Fatalf("no auto_fix_suggestion: %s", res.Body)
		}
		m, _ := s.(map[string]any)
		return m
	}
	first := suggestion(batch[0].ID)
	patch, _ := first["patch"].(map[string]any)
	if first["status"] != "fix_available" || patch["diff"] != fix.Diff || patch["explanation"] != "Use y" || patch["full_code"] != "y\n" {
		t.Fatalf("suggestion: %v", first)
	}
	if again := suggestion(batch[0].ID); again["id"] != first["id"] || uuid.Validate(first["id"].(string)) != nil {
		t.Fatalf("ids %v and %v", first["id"], again["id"])
	}
	if other := suggestion(batch[1].ID); other["id"] == first["id"] {
		t.Fatalf("two issues share the suggestion id %v", first["id"])
	}
	for _, i := range batch[2:] {
		if s := suggestion(i.ID); s != nil {
			t.Fatalf("issue without a diff: %v", s)
		}
	}
	res := testenv.Do(t, h, "GET", "/issues?project=app", "", testenv.Key(c.Admin)...)
	var list struct{ Issues []map[string]any }
	if err := json.Unmarshal(res.Body, &list); err != nil || len(list.Issues) != 4 {
		t.Fatalf("list: %d %s", res.Status, res.Body)
	}
	shown := 0
	for _, i := range list.Issues {
		if s, _ := i["auto_fix_suggestion"].(map[string]any); s != nil && s["status"] == "fix_available" {
			shown++
		}
	}
	if shown != 2 {
		t.Fatalf("%d suggestions in the list: %s", shown, res.Body)
	}
}

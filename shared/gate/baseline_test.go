package gate_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/acme/codescan-api/shared/gate"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

func identity(i findings.Issue) gate.Identity {
	return gate.Identity{Tool: i.Tool, Fingerprint: i.Fingerprint}
}

// item stands for anything the caller compares (issues of any kind).
type item struct{ id, tool, fp string }

func TestCompare(t *testing.T) {
	issue := func(id, tool, fp string) item { return item{id, tool, fp} }
	itemIdentity := func(i item) gate.Identity { return gate.Identity{Tool: i.tool, Fingerprint: i.fp} }
	issues := []item{
		issue("a", "gosec", "r:1"),
		issue("b", "gosec", "r:2"),
		issue("c", "semgrep", "r:1"), // same fingerprint, other tool
		issue("d", "gosec", ""),      // no identity to recognise
		issue("e", "gosec", "c:9"),
	}
	open := map[gate.Identity]bool{{"gosec", "r:1"}: true, {"gosec", "c:9"}: true, {"gosec", ""}: true, {"codeql", "r:2"}: true}
	cases := []struct {
		name             string
		b                gate.Baseline
		branch           string
		counted, leftOut []string
		summary          string
	}{
		{"open on the baseline's latest complete scan: left out",
			gate.Baseline{Branch: "main", ScanID: "s-9", Open: open}, "pr-7",
			[]string{"b", "c", "d"}, []string{"a", "e"},
			`{"branch":"main","scan_id":"s-9","counted":3,"left_out":2,"reason":"already open on main"}`},
		{"a clean baseline leaves nothing out",
			gate.Baseline{Branch: "main", ScanID: "s-9"}, "pr-7",
			[]string{"a", "b", "c", "d", "e"}, nil,
			`{"branch":"main","scan_id":"s-9","counted":5,"left_out":0,"reason":"already open on main"}`},
		{"no complete scan of the baseline: everything counted",
			gate.Baseline{Branch: "develop", Open: open}, "pr-7",
			[]string{"a", "b", "c", "d", "e"}, nil,
			`{"branch":"develop","scan_id":null,"counted":5,"left_out":0,"reason":"no complete scan of develop; all findings counted"}`},
		{"a scan of the baseline branch itself: everything counted",
			gate.Baseline{Branch: "pr-7", ScanID: "s-10", Open: map[gate.Identity]bool{{"gosec", "r:2"}: true}}, "pr-7",
			[]string{"a", "b", "c", "d", "e"}, nil,
			`{"branch":"pr-7","scan_id":null,"counted":5,"left_out":0,"reason":"the scan is of pr-7, the baseline; all findings counted"}`},
	}
	for _, c := range cases {
		got := gate.Compare(c.b, c.branch, issues, itemIdentity)
		if ids := itemIDs(got.Counted); !reflect.DeepEqual(ids, c.counted) {
			t.Errorf("%s: counted %v, want %v", c.name, ids, c.counted)
		}
		if ids := itemIDs(got.LeftOut); !reflect.DeepEqual(ids, c.leftOut) {
			t.Errorf("%s: left out %v, want %v", c.name, ids, c.leftOut)
		}
		if js, _ := json.Marshal(got.Summary); string(js) != c.summary {
			t.Errorf("%s: summary %s, want %s", c.name, js, c.summary)
		}
	}
	if got := gate.Compare(gate.Baseline{Branch: "main", ScanID: "s"}, "pr", []item{}, itemIdentity); got.Summary.Counted != 0 || got.Summary.LeftOut != 0 {
		t.Errorf("no findings: %+v", got.Summary)
	}
}

// The issue's example: a pull request that adds one critical finding to
// the twenty open on main blocks on that one only.
func TestCompareThenEvaluate(t *testing.T) {
	mainOpen := map[gate.Identity]bool{}
	var prIssues []findings.Issue
	for n := range 20 {
		fp := fmt.Sprintf("r:%d", n)
		mainOpen[gate.Identity{Tool: "gosec", Fingerprint: fp}] = true
		prIssues = append(prIssues, findings.Issue{ID: "old-" + fp, Tool: "gosec", Fingerprint: fp, Urgency: "CR", Status: "open"})
	}
	prIssues = append(prIssues, findings.Issue{ID: "new", Tool: "gosec", Fingerprint: "r:new", Urgency: "CR", Status: "open"})
	rules := []schema.BlockingRule{{ID: 1, Slug: "critical", Active: true, CI: true, Conditions: schema.RuleConditions{MinUrgency: "CR"}}}
	cmp := gate.Compare(gate.Baseline{Branch: "main", ScanID: "s-main", Open: mainOpen}, "feature", prIssues, identity)
	blocked := gate.Evaluate(rules, cmp.Counted, func(findings.Issue) bool { return true })
	if len(blocked) != 1 || blocked[0].IssueID != "new" || cmp.Summary.LeftOut != 20 || cmp.Summary.Counted != 1 {
		t.Fatalf("blocked %+v, summary %+v", blocked, cmp.Summary)
	}
	// Without a complete scan of main, all twenty-one block, as today.
	cmp = gate.Compare(gate.Baseline{Branch: "main"}, "feature", prIssues, identity)
	if blocked := gate.Evaluate(rules, cmp.Counted, func(findings.Issue) bool { return true }); len(blocked) != 21 {
		t.Fatalf("no baseline: %d blocked", len(blocked))
	}
}

func itemIDs(is []item) []string {
	var out []string
	for _, i := range is {
		out = append(out, i.id)
	}
	return out
}

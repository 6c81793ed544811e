package gate_test

import (
	"reflect"
	"testing"

	"github.com/acme/codescan-api/shared/gate"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

func ptr[T any](v T) *T { return &v }

func TestParse(t *testing.T) {
	got, err := gate.Parse(gate.Conditions{MinUrgency: ptr(" hi "), CWEs: []string{"CWE-89", "79", "cwe-89"},
		Paths: []string{"src/**/*.go", "src/**/*.go"}, Statuses: []string{"Open"}, OnlyNew: ptr(true)})
	want := schema.RuleConditions{MinUrgency: "HI", CWEs: []int{79, 89}, Paths: []string{"src/**/*.go"}, Statuses: []string{"open"}, OnlyNew: true}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v %v", got, err)
	}
	if v := gate.Show(got); *v.MinUrgency != "HI" || !reflect.DeepEqual(v.CWEs, []string{"CWE-79", "CWE-89"}) {
		t.Fatalf("%+v", v)
	}
	if v := gate.Show(schema.RuleConditions{}); v.MinUrgency != nil || v.CWEs == nil || v.Paths == nil || v.Statuses == nil {
		t.Fatalf("empty view %+v", v)
	}
	for name, c := range map[string]gate.Conditions{
		"urgency": {MinUrgency: ptr("urgent")},
		"cwe":     {CWEs: []string{"XSS"}},
		"glob":    {Paths: []string{"src/[a"}},
		"empty":   {Paths: []string{" "}},
		"status":  {Statuses: []string{"closed"}},
		"many":    {CWEs: make([]string, gate.MaxEntries+1)},
	} {
		if _, err := gate.Parse(c); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func TestEvaluate(t *testing.T) {
	issues := []findings.Issue{
		{ID: "i1", Urgency: "CR", CWE: 89, FilePath: "src/db/query.go", Status: "open"},
		{ID: "i2", Urgency: "ME", CWE: 79, FilePath: "web/app.js", Status: "open"},
		{ID: "i3", Urgency: "HI", CWE: 89, FilePath: "vendor/x.go", Status: "false_positive"},
		{ID: "i4", Urgency: "LO", CWE: findings.NoCWE, FilePath: "src/a.go", Status: "open"},
	}
	rules := []schema.BlockingRule{
		{ID: 1, Slug: "high", Conditions: schema.RuleConditions{MinUrgency: "HI"}},
		{ID: 2, Slug: "sqli-src", Conditions: schema.RuleConditions{CWEs: []int{89}, Paths: []string{"src/**"}, Statuses: []string{"open"}}},
		{ID: 3, Slug: "new", Conditions: schema.RuleConditions{OnlyNew: true}},
		// A dismissed finding blocks only a rule that names its status.
		{ID: 4, Slug: "dismissed-sqli", Conditions: schema.RuleConditions{CWEs: []int{89}, Statuses: []string{"false_positive"}}},
	}
	isNew := func(i findings.Issue) bool { return i.ID == "i2" }
	got := gate.Evaluate(rules, issues, isNew)
	slugs := map[string][]string{}
	for _, b := range got {
		for _, r := range b.Rules {
			slugs[b.IssueID] = append(slugs[b.IssueID], r.Slug)
		}
	}
	want := map[string][]string{"i1": {"high", "sqli-src"}, "i2": {"new"}, "i3": {"dismissed-sqli"}}
	if !reflect.DeepEqual(slugs, want) {
		t.Fatalf("%v", slugs)
	}
	if got[0].IssueID != "i1" || got[1].IssueID != "i2" {
		t.Fatal("issue order not kept")
	}
	if !gate.NeedsNewness(rules) || gate.NeedsNewness(rules[:2]) || gate.NeedsNewness(rules[3:]) {
		t.Fatal("NeedsNewness")
	}
	if len(gate.Evaluate(nil, issues, isNew)) != 0 {
		t.Fatal("no rules, no blocks")
	}
}

func TestSelect(t *testing.T) {
	all := []schema.BlockingRule{
		{ID: 1, Slug: "a", Active: true, CI: true},
		{ID: 2, Slug: "b", Active: false, CI: true},
		{ID: 3, Slug: "c", Active: true, CI: false},
	}
	sel := gate.Select(all, nil)
	if !sel.Valid() || len(sel.Rules) != 2 || sel.Rules[0].ID != 1 || sel.Rules[1].ID != 3 {
		t.Fatalf("without block_on every active rule, any scope: %+v", sel)
	}
	sel = gate.Select(all, []string{"a", "b", "c", "zz"})
	if sel.Valid() || !reflect.DeepEqual(sel.Unknown, []string{"zz"}) || !reflect.DeepEqual(sel.Inactive, []string{"b"}) ||
		!reflect.DeepEqual(sel.NotCI, []string{"c"}) || len(sel.Rules) != 1 {
		t.Fatalf("%+v", sel)
	}
}

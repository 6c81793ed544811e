package eventfilter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

func sample() Event {
	return Event{
		Type: "scan_completed", ID: "scan_completed-s1", CreatedAt: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC),
		Project: Project{ID: 7, Name: "payments-api", Branch: "main"},
		NewFindings: []Finding{
			{ID: "a", Urgency: "CR", Rule: "go.sqli", CWE: 89, Tool: "semgrep", Path: "db/q.go", Title: "SQL injection"},
			{ID: "b", Urgency: "LO", Rule: "go.weak", CWE: 327, Tool: "semgrep", Path: "x.go", Title: "Weak hash"},
		},
		Counts: Counts{New: 2, Findings: 40},
		Data:   NewData(map[string]any{"tool": "semgrep", "findings": 40.0}),
	}
}

func TestCompileAndMatch(t *testing.T) {
	cases := []struct {
		src  string
		want bool
	}{
		{``, true},
		{`event.type == "scan_completed" && event.new_findings.exists(f, f.urgency == "CR")`, true},
		{`event.new_findings.exists(f, f.urgency == "HI")`, false},
		{`event.project.name.startsWith("payments-")`, true},
		{`event.project.name.startsWith("billing-")`, false},
		{`event.counts.new >= 2 && event.counts.findings == 40`, true},
		{`event.new_findings.exists(f, f.cwe == 89 && f.path.endsWith(".go"))`, true},
		{`event.created_at > timestamp("2026-11-01T00:00:00Z")`, true},
		{`event.data.tool == "semgrep"`, true},
		{`"tool" in event.data && event.data.findings > 10.0`, true},
		{`size(event.new_findings) == 2 && event.issue.id == ""`, true},
		{`event.new_findings.all(f, f.title.matches("^[A-Z]"))`, true},
	}
	for _, c := range cases {
		f, err := Compile(c.src)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.src, err)
		}
		got, err := f.Match(sample())
		if err != nil || got != c.want {
			t.Errorf("Match(%q) = %v, %v; want %v", c.src, got, err, c.want)
		}
	}
}

func TestCompileRefuses(t *testing.T) {
	cases := []struct{ src, want string }{
		{`event.projet.name == "x"`, "line 1, column 6: undefined field 'projet'"},
		{`event.new_findings.exists(f, f.urgencyy == "CR")`, "undefined field 'urgencyy'"},
		{`event.type`, "must return a bool, not string"},
		{`event.type ==`, "line 1, column 14"},
		{`event.new_findings.exists(f, event.new_findings.exists(g, g.title == f.title))`, "more than the limit of 200000"},
		{`event.data.issues.exists(a, event.data.issues.exists(b, a == b))`, "more than the limit"},
		{`event.type == "a` + "\x07" + `"`, "line 1, column 17: control or format character U+0007"},
		{"event.type == \"a\u202e\"", "U+202E"},
		{"event.type == \"\xff\"", "UTF-8"},
		{strings.Repeat(`event.type == "x" || `, 100) + "true", "at most 2000 bytes"},
		{strings.Repeat("(", 40) + "true" + strings.Repeat(")", 40), "recursion"},
		{`[1,2].map(x, x) == [1,2] && event.type.foo()`, "undeclared reference"},
	}
	for _, c := range cases {
		_, err := Compile(c.src)
		var fe *Error
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compile(%.60q) = %v; want an *Error containing %q", c.src, err, c.want)
		}
	}
}

func TestRuntimeErrorIsNoMatch(t *testing.T) {
	f, err := Compile(`event.data.missing == "x"`)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := f.Match(sample()); ok || err == nil {
		t.Fatalf("Match = %v, %v; want false and the missing key's error", ok, err)
	}
	var nilFilter *Filter
	if ok, err := nilFilter.Match(sample()); !ok || err != nil {
		t.Fatalf("nil filter: %v, %v", ok, err)
	}
}

// scanIssues is a Source of one scan's issues.
type scanIssues map[string][]findings.Issue

func (s scanIssues) EachScanIssue(_ context.Context, _ int64, scanID string, fn func(findings.Issue) error) error {
	is, ok := s[scanID]
	if !ok {
		return ddb.ErrNotFound
	}
	for _, i := range is {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

func TestBuild(t *testing.T) {
	var issues []findings.Issue
	for n := range 300 {
		u := []string{"LO", "ME", "HI", "CR"}[n%4]
		issues = append(issues, findings.Issue{ID: fmt.Sprintf("i%03d", n), ScanID: "s1", Status: "open", Urgency: u, Title: "t", CWE: 79})
	}
	issues = append(issues, findings.Issue{ID: "old", ScanID: "s0", Status: "open", Urgency: "CR"},
		findings.Issue{ID: "sup", ScanID: "s1", Status: "suppressed", Urgency: "CR"})
	data, _ := json.Marshal(map[string]any{"scan_id": "s1", "project_id": 7, "project_name": "payments-api", "branch": "main",
		"tool": "semgrep", "findings": 302, "long": strings.Repeat("é", 3000), "list": make([]int, 500)})
	ev, err := Build(context.Background(), scanIssues{"s1": issues}, schema.Event{ID: "scan_completed-s1", CompanyID: 1, Type: "scan_completed",
		CreatedAt: time.Unix(1e9, 0), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Project != (Project{7, "payments-api", "main"}) || ev.Counts.New != 300 || ev.Counts.Findings != 302 {
		t.Fatalf("project %+v counts %+v", ev.Project, ev.Counts)
	}
	if len(ev.NewFindings) != MaxNewFindings || ev.NewFindings[0].Urgency != "CR" || ev.NewFindings[74].Urgency != "CR" || ev.NewFindings[75].Urgency != "HI" {
		t.Fatalf("new findings: %d, first %+v", len(ev.NewFindings), ev.NewFindings[0])
	}
	f, _ := Compile(`size(event.data.long) == 1024 && size(event.data.list) == 100`)
	if ok, err := f.Match(ev); !ok || err != nil {
		t.Fatalf("bounded data: %v %v", ok, err)
	}
	// The event's own count of new issues wins over what was examined.
	data, _ = json.Marshal(map[string]any{"scan_id": "s1", "new_issues": 7200})
	if ev, err = Build(context.Background(), scanIssues{"s1": issues}, schema.Event{ID: "scan_completed-s1", CompanyID: 1,
		Type: "scan_completed", Data: data}); err != nil || ev.Counts.New != 7200 {
		t.Fatalf("new_issues: %+v %v", ev.Counts, err)
	}
	// An issue event; a scan that is gone has no findings.
	data, _ = json.Marshal(map[string]any{"issue_id": "i1", "title": "XSS", "status": "fixed", "previous_status": "open", "project_name": "p"})
	ev, err = Build(context.Background(), scanIssues{}, schema.Event{ID: "e", CompanyID: 1, Type: "issue_status_changed", Data: data})
	if err != nil || ev.Issue != (Issue{ID: "i1", Title: "XSS", Status: "fixed", PreviousStatus: "open"}) || len(ev.NewFindings) != 0 {
		t.Fatalf("issue event: %+v %v", ev, err)
	}
	data, _ = json.Marshal(map[string]any{"scan_id": "gone", "count": 3})
	ev, err = Build(context.Background(), scanIssues{}, schema.Event{ID: "e", CompanyID: 1, Type: "new_high_issue", Data: data})
	if err != nil || ev.Counts.New != 3 || len(ev.NewFindings) != 0 {
		t.Fatalf("gone scan: %+v %v", ev, err)
	}
}

// Typical and worst accepted expressions: `make bench` prints their
// estimated cost and time per evaluation over an event at the bounds.
var benchCases = []struct{ name, src string }{
	{"typical", `event.type == "scan_completed" && event.new_findings.exists(f, f.urgency == "CR")`},
	{"prefix", `event.project.name.startsWith("payments-")`},
	{"worst_regex", `event.new_findings.exists(f, f.title.matches("(a|b)*c[0-9]+x") || f.path.matches(".*vendor/.*z"))`},
	{"worst_data", `event.data.exists(k, string(event.data[k]).contains("zz") && string(event.data[k]).contains("yy"))`},
}

func worstEvent() Event {
	ev := sample()
	long := strings.Repeat("ab", MaxText/2)
	ev.NewFindings = nil
	for n := range MaxNewFindings {
		ev.NewFindings = append(ev.NewFindings, Finding{ID: fmt.Sprint(n), Urgency: "LO", Title: long, Path: long})
	}
	m := map[string]any{}
	for n := range MaxListed {
		m[fmt.Sprintf("k%03d", n)] = long
	}
	ev.Data = NewData(m)
	return ev
}

func BenchmarkFilter(b *testing.B) {
	ev := worstEvent()
	for _, c := range benchCases {
		f, err := Compile(c.src)
		if err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := f.Match(ev); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(f.EstimatedCost()), "est-cost")
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	for b.Loop() {
		if _, err := Compile(benchCases[0].src); err != nil {
			b.Fatal(err)
		}
	}
}

// The runtime limit holds even for an event past the bounds the estimate
// assumes (Build never makes one): evaluation stops with an error.
func TestRuntimeCostLimit(t *testing.T) {
	f, err := Compile(`event.new_findings.exists(f, f.title.contains("zz"))`)
	if err != nil {
		t.Fatal(err)
	}
	ev := sample()
	ev.NewFindings = make([]Finding, 5_000) // 25 times the bound
	for n := range ev.NewFindings {
		ev.NewFindings[n].Title = strings.Repeat("ab", MaxText/2)
	}
	start := time.Now()
	ok, err := f.Match(ev)
	if ok || err == nil || Failure(err) != FailureCostLimit {
		t.Fatalf("Match = %v, %v; want the cost limit's error", ok, err)
	}
	t.Logf("stopped after %v", time.Since(start))
}

// A failure other than the cost limit is an evaluation error; Check
// stores the trimmed source, nothing for blank, and refuses with *Error.
func TestFailureAndCheck(t *testing.T) {
	f, err := Compile(`event.data["missing"] == 1.0`)
	if err != nil {
		t.Fatal(err)
	}
	ok, err := f.Match(sample())
	if ok || err == nil || Failure(err) != FailureEvaluation {
		t.Fatalf("Match = %v, %v; want an evaluation error", ok, err)
	}
	if got, err := Check("  event.type == \"scan_completed\"\n"); err != nil || got != `event.type == "scan_completed"` {
		t.Errorf("Check = %q, %v", got, err)
	}
	if got, err := Check(" \t"); err != nil || got != "" {
		t.Errorf("Check of blank = %q, %v", got, err)
	}
	var fe *Error
	if _, err := Check("event.nope"); !errors.As(err, &fe) || fe.Line != 1 {
		t.Errorf("Check of a misspelled field = %v", err)
	}
}

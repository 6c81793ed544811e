package projects_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/scans"
)

type baselineSummary struct {
	Branch  string  `json:"branch"`
	ScanID  *string `json:"scan_id"`
	Counted int     `json:"counted"`
	LeftOut int     `json:"left_out"`
	Reason  string  `json:"reason"`
}

type gateWithBaseline struct {
	gateAnswer
	Baseline *baselineSummary `json:"baseline"`
}

// The issue's example: main has twenty open criticals; a pull request
// branch whose scan adds one new critical fails the gate for that one
// only, and its issue list with the baseline lists that one only.
func TestBaselineGate(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	var mainResults []string
	for n := range 20 {
		mainResults = append(mainResults, result("sqli", fmt.Sprintf("src/f%d.py", n), n+1))
	}
	// The other company's main holds the pull request's new finding too:
	// it must not count as acme's baseline.
	w.upload(t, w.other, "payments", "main", sarif(append(mainResults, result("sqli", "src/new.py", 7))...))
	mainScan := w.upload(t, w.acme, "payments", "main", sarif(mainResults...))
	pr := w.upload(t, w.acme, "payments", "pr-7", sarif(append(mainResults, result("sqli", "src/new.py", 7))...))
	critical := w.rule(t, w.acme, `{"slug":"critical","name":"Critical","conditions":{"min_urgency":"CR"}}`)
	gateURL := "/scan/" + pr.ScanID + "/check_blocking_rules?page=1&block_on=critical"

	// Default baseline: the project's default branch (main, its first scan's).
	var a gateWithBaseline
	w.get(t, w.acme.Admin, gateURL).Decode(t, fresh(&a))
	if !a.Block || a.Stats.BlockedIssues != 1 || len(a.BlockingIssues) != 1 || a.Baseline == nil {
		t.Fatalf("default baseline: %+v", a)
	}
	if got, _ := w.env.Store.Lists.GetIssue(ctx, w.acme.ID, a.BlockingIssues[0].ID); got.FilePath != "src/new.py" || got.Branch != "pr-7" {
		t.Fatalf("blocked %+v", got)
	}
	want := baselineSummary{Branch: "main", ScanID: &mainScan.ScanID, Counted: 1, LeftOut: 20, Reason: "already open on main"}
	if *a.Baseline.ScanID != *want.ScanID || a.Baseline.Branch != want.Branch || a.Baseline.Counted != 1 || a.Baseline.LeftOut != 20 || a.Baseline.Reason != want.Reason {
		t.Fatalf("baseline %+v, want %+v", *a.Baseline, want)
	}
	// Named explicitly: the same.
	w.get(t, w.acme.Admin, gateURL+"&baseline=main").Decode(t, fresh(&a))
	if a.Stats.BlockedIssues != 1 || a.Baseline == nil || a.Baseline.LeftOut != 20 {
		t.Fatalf("baseline=main: %+v", a)
	}
	// No baseline: all twenty-one, as before baselines.
	w.get(t, w.acme.Admin, gateURL+"&baseline=").Decode(t, fresh(&a))
	if a.Stats.BlockedIssues != 21 || a.Baseline != nil {
		t.Fatalf("baseline=: %+v", a)
	}
	// A scan of the baseline branch itself: everything judged.
	w.get(t, w.acme.Admin, "/scan/"+mainScan.ScanID+"/check_blocking_rules?page=1&block_on=critical").Decode(t, fresh(&a))
	if a.Stats.BlockedIssues != 20 || a.Baseline == nil || a.Baseline.ScanID != nil || a.Baseline.Counted != 20 ||
		a.Baseline.Reason != "the scan is of main, the baseline; all findings counted" {
		t.Fatalf("on main: %+v %+v", a, a.Baseline)
	}
	// A branch with a scan but no complete one: everything judged, and said so.
	proj, err := w.env.Store.Catalog.ProjectByName(ctx, w.acme.ID, "payments")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.env.Store.Scans.CreateScan(ctx, scans.Scan{CompanyID: w.acme.ID, ProjectID: proj.ID, Branch: "develop", Engine: "sarif", Status: scans.ScanProcessing}); err != nil {
		t.Fatal(err)
	}
	w.get(t, w.acme.Admin, gateURL+"&baseline=develop").Decode(t, fresh(&a))
	if a.Stats.BlockedIssues != 21 || a.Baseline == nil || a.Baseline.ScanID != nil || a.Baseline.Counted != 21 ||
		a.Baseline.Reason != "no complete scan of develop; all findings counted" {
		t.Fatalf("develop: %+v %+v", a, a.Baseline)
	}

	// The scan's issue list against the baseline: the new finding only.
	var list struct {
		TotalIssues int `json:"total_issues"`
		TotalPages  int `json:"total_pages"`
		Issues      []struct {
			ID       string `json:"id"`
			Location struct {
				File struct{ Path string }
			}
		}
		NextPageToken *string          `json:"next_page_token"`
		Baseline      *baselineSummary `json:"baseline"`
	}
	w.get(t, w.acme.Admin, "/scan/"+pr.ScanID+"/issues?baseline=main").Decode(t, fresh(&list))
	if list.TotalIssues != 1 || list.TotalPages != 1 || len(list.Issues) != 1 || list.Issues[0].Location.File.Path != "src/new.py" ||
		list.Baseline == nil || list.Baseline.LeftOut != 20 || list.NextPageToken != nil {
		t.Fatalf("scan issues against main: %+v", list)
	}
	w.get(t, w.acme.Admin, "/scan/"+pr.ScanID+"/issues?page_size=50").Decode(t, fresh(&list))
	if list.TotalIssues != 21 || len(list.Issues) != 21 || list.Baseline != nil {
		t.Fatalf("scan issues without a baseline: %d issues, baseline %+v", len(list.Issues), list.Baseline)
	}

	// Bad input: 400 naming baseline, nothing recorded (a fresh scan's gate
	// writes its policy_violation event only when it answers).
	pr2 := w.upload(t, w.acme, "payments", "pr-8", sarif(result("sqli", "src/other.py", 3)))
	res := w.get(t, w.acme.Admin, "/scan/"+pr2.ScanID+"/check_blocking_rules?page=1&block_on=critical&baseline=nope")
	if res.Status != 400 || !strings.Contains(string(res.Body), `baseline: the project has no scan of branch \"nope\"`) {
		t.Fatalf("unknown baseline: %d %s", res.Status, res.Body)
	}
	sum := sha256.Sum256([]byte(critical))
	violation := "policy_violation-" + pr2.ScanID + "-" + hex.EncodeToString(sum[:8])
	if _, ok := testenv.OutboxEvent(t, w.env.Store, w.acme.ID, violation); ok {
		t.Fatal("a refused check recorded its violation")
	}
	w.get(t, w.acme.Admin, "/scan/"+pr2.ScanID+"/check_blocking_rules?page=1&block_on=critical&baseline=main").Decode(t, fresh(&a))
	if _, ok := testenv.OutboxEvent(t, w.env.Store, w.acme.ID, violation); !a.Block || !ok {
		t.Fatalf("the valid check blocks and records its violation: %+v", a)
	}
	for _, q := range []string{"baseline=nope", "baseline=main&page_token=abc"} {
		if res := w.get(t, w.acme.Admin, "/scan/"+pr.ScanID+"/issues?"+q); res.Status != 400 {
			t.Fatalf("%s: %d %s", q, res.Status, res.Body)
		}
	}
	// Tenant isolation: another company's branch name is unknown here, and
	// its scan answers like a missing one.
	w.upload(t, w.other, "payments", "only-other", sarif(result("xss", "web/a.js", 1)))
	if res := w.get(t, w.acme.Admin, gateURL+"&baseline=only-other"); res.Status != 400 {
		t.Fatalf("other company's branch: %d %s", res.Status, res.Body)
	}
	if res := w.get(t, w.other.Admin, gateURL+"&baseline=main"); res.Status != 404 {
		t.Fatalf("foreign scan: %d %s", res.Status, res.Body)
	}
	testenv.Recount(t, w.env.Store, w.acme.ID)
	testenv.Recount(t, w.env.Store, w.other.ID)
}

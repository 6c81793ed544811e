package projects_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/scans"
)

type gateAnswer struct {
	Status         string
	Block          bool
	BlockingIssues []struct {
		ID               string   `json:"id"`
		TriggeredByRules []string `json:"triggered_by_rules"`
		TriggeredBySlugs []string `json:"triggered_by_slugs"`
	} `json:"blocking_issues"`
	TotalPages int `json:"total_pages"`
	Stats      struct {
		BlockedIssues int `json:"blocked_issues"`
	}
}

func (w *world) rule(t *testing.T, c *testenv.Company, body string) string {
	t.Helper()
	res := testenv.Do(t, w.h, "POST", "/blocking-rules", body, testenv.Key(c.Admin)...)
	if res.Status != 201 {
		t.Fatalf("rule: %d %s", res.Status, res.Body)
	}
	var out struct{ Rule struct{ ID string } }
	res.Decode(t, &out)
	return out.Rule.ID
}

func TestCheckBlockingRules(t *testing.T) {
	w := newWorld(t)
	// main: sqli (CR) and xss (HI); the pull request branch adds a second sqli.
	w.upload(t, w.acme, "payments", "main", sarif(result("sqli", "src/db.py", 1), result("xss", "web/a.js", 2)))
	pr := w.upload(t, w.acme, "payments", "feature", sarif(result("sqli", "src/db.py", 1), result("xss", "web/a.js", 2), result("sqli", "src/new.py", 9)))
	critical := w.rule(t, w.acme, `{"slug":"critical","name":"Critical","conditions":{"min_urgency":"CR"}}`)
	newOnes := w.rule(t, w.acme, `{"slug":"new-sqli","name":"New SQLi","conditions":{"cwes":["CWE-89"],"only_new":true}}`)
	w.rule(t, w.acme, `{"slug":"off","name":"Off","active":false}`)
	w.rule(t, w.acme, `{"slug":"dash","name":"Dashboard","ci":false,"conditions":{"paths":["web/**"]}}`)
	w.rule(t, w.other, `{"slug":"foreign","name":"Other company"}`)

	var a gateAnswer
	w.get(t, w.acme.Admin, "/scan/"+pr.ScanID+"/check_blocking_rules?page=1&block_on=new-sqli").Decode(t, fresh(&a))
	if a.Status != "complete" || !a.Block || a.Stats.BlockedIssues != 1 || a.TotalPages != 1 || len(a.BlockingIssues) != 1 ||
		!slices.Equal(a.BlockingIssues[0].TriggeredByRules, []string{newOnes}) || !slices.Equal(a.BlockingIssues[0].TriggeredBySlugs, []string{"new-sqli"}) {
		t.Fatalf("only the finding not open on main blocks: %+v", a)
	}
	blocked, _ := w.env.Store.Lists.GetIssue(context.Background(), w.acme.ID, a.BlockingIssues[0].ID)
	if blocked.FilePath != "src/new.py" {
		t.Fatalf("blocked %+v", blocked)
	}
	// Without block_on: every active rule, CI or not (here over every
	// finding: no baseline, see baseline_test.go).
	w.get(t, w.acme.Admin, "/scan/"+pr.ScanID+"/check_blocking_rules?page=1&baseline=").Decode(t, fresh(&a))
	if !a.Block || a.Stats.BlockedIssues != 3 {
		t.Fatalf("all active rules: %+v", a)
	}
	w.get(t, w.acme.Admin, "/scan/"+pr.ScanID+"/check_blocking_rules?page=1&block_on=critical&baseline=").Decode(t, fresh(&a))
	if !a.Block || a.Stats.BlockedIssues != 2 || a.BlockingIssues[0].TriggeredByRules[0] != critical {
		t.Fatalf("critical: %+v", a)
	}
	// A rule that blocks nothing.
	w.rule(t, w.acme, `{"slug":"java","name":"Java","conditions":{"paths":["**/*.java"]}}`)
	w.get(t, w.acme.Admin, "/scan/"+pr.ScanID+"/check_blocking_rules?page=1&block_on=java").Decode(t, fresh(&a))
	if a.Block || a.Stats.BlockedIssues != 0 || len(a.BlockingIssues) != 0 || a.TotalPages != 1 {
		t.Fatalf("java: %+v", a)
	}
	// Bad slugs: 400 naming each.
	res := w.get(t, w.acme.Admin, "/scan/"+pr.ScanID+"/check_blocking_rules?page=1&block_on=critical,off,dash,nope,foreign")
	want := `{"message":"Invalid block_on rule(s).","unknown_slugs":["nope","foreign"],"inactive_slugs":["off"],"non_ci_slugs":["dash"]}`
	if res.Status != 400 || !jsonEq(t, res.Body, want) {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	res = w.get(t, w.acme.Admin, "/scan/"+pr.ScanID+"/check_blocking_rules?page=1&block_on=,%20,")
	if res.Status != 400 || !jsonEq(t, res.Body, `{"message":"block_on was provided but contained no rule slugs.","unknown_slugs":[],"inactive_slugs":[],"non_ci_slugs":[]}`) {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
	// The violation is one policy_violation event in the outbox however
	// often the scan was checked: its id names the scan and the rules.
	sum := sha256.Sum256([]byte(newOnes))
	v, ok := testenv.OutboxEvent(t, w.env.Store, w.acme.ID, "policy_violation-"+pr.ScanID+"-"+hex.EncodeToString(sum[:8]))
	if !ok || v["scan_id"] != pr.ScanID || v["count"] != 1.0 || v["project_name"] != "payments" ||
		fmt.Sprint(v["rules"]) != fmt.Sprintf("[map[id:%s slug:new-sqli]]", newOnes) {
		t.Fatalf("policy_violation event %v (found %v)", v, ok)
	}
	// Pending while processing.
	proj, _ := w.env.Store.Catalog.ProjectByName(context.Background(), w.acme.ID, "payments")
	sc, err := w.env.Store.Scans.CreateScan(context.Background(), scans.Scan{CompanyID: w.acme.ID, ProjectID: proj.ID, Branch: "x", Engine: "sarif", Status: scans.ScanProcessing})
	if err != nil {
		t.Fatal(err)
	}
	w.get(t, w.acme.Admin, "/scan/"+sc.ID+"/check_blocking_rules?page=1").Decode(t, fresh(&a))
	if a.Status != "pending" || a.Block {
		t.Fatalf("processing: %+v", a)
	}
	// Another company's scan answers like a missing one.
	foreign := w.get(t, w.other.Admin, "/scan/"+pr.ScanID+"/check_blocking_rules?page=1")
	missing := w.get(t, w.other.Admin, "/scan/"+uuid.NewString()+"/check_blocking_rules?page=1")
	if foreign.Status != 404 || string(foreign.Body) != string(missing.Body) {
		t.Fatalf("foreign %d %s", foreign.Status, foreign.Body)
	}
}

// Blocking issues are paged by 50; total_pages is never 0 while block is
// true, and stats count every page.
func TestCheckBlockingRulesPages(t *testing.T) {
	w := newWorld(t)
	var results []string
	for n := range 60 {
		results = append(results, result("sqli", fmt.Sprintf("src/f%d.py", n), n+1))
	}
	up := w.upload(t, w.acme, "payments", "main", sarif(results...))
	w.rule(t, w.acme, `{"slug":"all","name":"All"}`)
	var ids []string
	for page := 1; page <= 2; page++ {
		var a gateAnswer
		w.get(t, w.acme.Admin, "/scan/"+up.ScanID+"/check_blocking_rules?block_on=all&page="+strconv.Itoa(page)).Decode(t, &a)
		if !a.Block || a.TotalPages != 2 || a.Stats.BlockedIssues != 60 || len(a.BlockingIssues) != []int{50, 10}[page-1] {
			t.Fatalf("page %d: %+v", page, a)
		}
		for _, b := range a.BlockingIssues {
			ids = append(ids, b.ID)
		}
	}
	if !slices.IsSorted(ids) || len(slices.Compact(slices.Clone(ids))) != 60 {
		t.Fatalf("pages repeat or skip issues: %v", ids)
	}
}

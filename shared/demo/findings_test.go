package demo_test

import (
	"context"
	"testing"

	"github.com/acme/codescan-api/shared/demo"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// checkFindings checks the seed's findings: groups, a third-party scan,
// SCA and quality findings, six weeks of trend; a second seed writes
// nothing new.
func checkFindings(t *testing.T, st *store.Store, doc *demo.Document) {
	ctx := context.Background()
	for n, c := range doc.Companies {
		groups, err := st.Lists.ListGroups(ctx, c.ID, schema.Scope{}, schema.ByCWE, page.Request{Limit: 100})
		if err != nil || groups.Count() < 5 {
			t.Fatalf("%s: %d CWE groups, %v", c.Name, groups.Count(), err)
		}
		var sum int64
		for _, g := range groups.Items {
			sum += g.Count
		}
		if want := []int64{400, 150}[n]; sum != want {
			t.Fatalf("%s: %d issues counted, want %d", c.Name, sum, want)
		}
		runs := c.Resources["third_party_run_ids"].([]string)
		scan, err := st.Scans.ScanByRunID(ctx, c.ID, runs[0])
		if err != nil || scan.Engine != "sarif" {
			t.Fatalf("%s: third-party scan %+v, %v", c.Name, scan, err)
		}
		for _, id := range c.Resources["sca_issue_ids"].([]string) {
			if _, err := st.SCA.GetSCAIssue(ctx, c.ID, id); err != nil {
				t.Fatalf("%s: SCA issue %s: %v", c.Name, id, err)
			}
		}
		for _, id := range c.Resources["scan_ids_with_quality_issues"].([]string) {
			if q, err := st.Quality.ListScanQualityIssues(ctx, c.ID, id, "", page.Request{Limit: 50}); err != nil || len(q.Items) != 35 || q.Count() != 35 {
				t.Fatalf("%s: quality issues of %s: %d of %d, %v", c.Name, id, len(q.Items), q.Count(), err)
			}
		}
	}
	// The history spans six weeks: the trend has first detections, fixes
	// and reopenings on different days, and dismissals at the triage.
	tw, err := st.Lists.Trend(ctx, doc.Companies[0].ID, 0, 60)
	if err != nil {
		t.Fatal(err)
	}
	days := map[string]bool{}
	var opened, fixed, reopened, dismissed int64
	for _, p := range tw.Points {
		if p.Opened+p.Fixed+p.Reopened+p.Dismissed > 0 {
			days[p.Date] = true
		}
		opened, fixed, reopened, dismissed = opened+p.Opened, fixed+p.Fixed, reopened+p.Reopened, dismissed+p.Dismissed
	}
	if len(days) != 4 || opened != 400 || fixed == 0 || reopened == 0 || dismissed == 0 {
		t.Fatalf("demo trend: changes on %d days (want 4), opened %d fixed %d reopened %d dismissed %d", len(days), opened, fixed, reopened, dismissed)
	}
	// Seeding is recorded: a second run writes nothing new.
	again, err := demo.Seed(ctx, st, []byte("secret"))
	if err != nil || len(again.Companies) != 2 {
		t.Fatalf("second seed: %v", err)
	}
}

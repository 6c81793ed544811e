package findings_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
)

// benchScan is a processing scan of branch made at at, and its findings
// for fingerprints f<from>..f<to-1>, a file to every ten.
func (w *world) benchScan(b *testing.B, wr *writer, branch string, at time.Time, from, to int) (scans.Scan, []findings.Issue) {
	b.Helper()
	sc, err := wr.scans.CreateScan(context.Background(), scans.Scan{ID: uuid.NewString(), CompanyID: w.company, ProjectID: w.project,
		Branch: branch, Engine: "sarif", Tool: "t", Status: scans.ScanProcessing, CreatedAt: at.Format(time.RFC3339)})
	if err != nil {
		b.Fatal(err)
	}
	found := make([]findings.Issue, 0, to-from)
	for n := from; n < to; n++ {
		fp := fmt.Sprintf("f%05d", n)
		found = append(found, findings.Issue{ID: findings.IssueID(w.company, w.project, branch, "t", fp), ProjectID: w.project,
			ProjectName: "svc", Branch: branch, Tool: "t", Fingerprint: fp, CWE: []int{79, 89, 22, 78}[n%4],
			FilePath: fmt.Sprintf("src/d%02d/f%04d.go", n%17, n/10), Line: n % 300, Urgency: []string{"HI", "CR", "ME"}[n%3],
			RuleID: "r-" + fp[:4], Title: "finding " + fp, CreatedAt: sc.CreatedAt})
	}
	return sc, found
}

// The write path's cost under the lease: the first scan of a branch with
// 5,000 findings (all created), then a second one that reports half of
// them again and 2,500 new ones (2,500 created, 2,500 fixed).
func BenchmarkApplyScan5000(b *testing.B) {
	w := newWorld(b)
	wr := w.writer(w.t0)
	m := &ddb.Meter{}
	ctx := ddb.WithMeter(context.Background(), m)
	for n := 0; n < b.N; n++ {
		b.StopTimer()
		branch := fmt.Sprintf("bench-%d", n)
		first, found := w.benchScan(b, wr, branch, w.t0, 0, 5000)
		b.StartTimer()
		if res, err := wr.f.ApplyScan(ctx, w.company, first, found); err != nil || res.Created != 5000 {
			b.Fatalf("first scan: %+v %v", res, err)
		}
		b.StopTimer()
		second, found := w.benchScan(b, wr, branch, w.t0.Add(time.Minute), 2500, 7500)
		b.StartTimer()
		if res, err := wr.f.ApplyScan(ctx, w.company, second, found); err != nil || res.Created != 2500 || res.Fixed != 2500 {
			b.Fatalf("second scan: %+v %v", res, err)
		}
	}
	requests, rcu, wcu := m.Snapshot()
	b.ReportMetric(float64(requests)/float64(b.N), "requests/op")
	b.ReportMetric(rcu/float64(b.N), "RCU/op")
	b.ReportMetric(wcu/float64(b.N), "WCU/op")
}

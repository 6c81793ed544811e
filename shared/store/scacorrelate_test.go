package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	sharedfinding "github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports"
	"github.com/acme/codescan-api/shared/scanlife"
	"github.com/acme/codescan-api/shared/store"
	storefindings "github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// realSCA parses a real scanner output of shared/reports' fixtures.
func realSCA(t *testing.T, engine, path string) []sharedfinding.Finding {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := reports.Parse(engine, b)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Findings
}

const (
	govulncheckGogo = "../reports/govulncheck/testdata/gogo.json"
	osvGoAndCargo   = "../reports/osv/testdata/go-and-cargo.json"
)

// osvWithoutGo is OSV-Scanner's go-and-cargo.json without its go.mod's
// result: the scanner no longer reports gogo/protobuf.
func osvWithoutGo(t *testing.T) []sharedfinding.Finding {
	t.Helper()
	b, err := os.ReadFile(osvGoAndCargo)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["results"] = doc["results"].([]any)[1:]
	b, _ = json.Marshal(doc)
	rep, err := reports.Parse("osv-scanner", b)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Findings
}

type scaWorld struct {
	st      *store.Store
	company int64
	proj    schema.Project
	clock   time.Time
}

func newSCAWorld(t *testing.T, st *store.Store, company int64) *scaWorld {
	t.Helper()
	p, err := st.Catalog.CreateProject(context.Background(), schema.Project{CompanyID: company, Name: "gogo"})
	if err != nil {
		t.Fatal(err)
	}
	return &scaWorld{st: st, company: company, proj: p, clock: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)}
}

// upload writes a report's findings as a scan of tool on branch, the way
// the ingester does (scanlife.Write: SCA findings, then the lifecycle that
// completes the scan).
func (w *scaWorld) upload(t *testing.T, branch, tool string, fs []sharedfinding.Finding) scans.Scan {
	t.Helper()
	w.clock = w.clock.Add(time.Minute)
	ctx := context.Background()
	sc, err := w.st.Scans.CreateScan(ctx, scans.Scan{CompanyID: w.company, ProjectID: w.proj.ID, Branch: branch, Engine: tool,
		Tool: tool, Status: scans.ScanProcessing, CreatedAt: w.clock.Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	if err := scanlife.Write(ctx, scanlife.WritingOf(w.st), sc, w.proj, fs); err != nil {
		t.Fatal(err)
	}
	return sc
}

// findings are the project's SCA findings by package name, and their
// counted total.
func (w *scaWorld) findings(t *testing.T) (map[string][]sca.Issue, int) {
	t.Helper()
	listPage, err := w.st.SCA.ListSCAIssues(context.Background(), w.company, w.proj.ID, page.Request{Limit: 100})
	list, total := listPage.Items, listPage.Count()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]sca.Issue{}
	for _, i := range list {
		out[i.Package.Name] = append(out[i.Package.Name], i)
	}
	return out, int(total)
}

func sourcesOf(i sca.Issue) string { return fmt.Sprint(i.SourceList()) }

// govulncheck and OSV-Scanner report the same vulnerability of the same
// module graph (GO-2021-0053 in github.com/gogo/protobuf 1.3.1, with
// aliases CVE-2021-3121 and GHSA-c3h9-896r-86jm; the Go module version
// written v1.3.1 by one, 1.3.1 by the other): one finding with two
// sources, counted once, first detected by the first; a source that stops
// reporting it leaves the other.
func TestOneSCAFindingPerVulnerability(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	w := newSCAWorld(t, st, 41)
	const gogo, regex = "github.com/gogo/protobuf", "regex"

	first := w.upload(t, "main", "govulncheck", realSCA(t, "govulncheck", govulncheckGogo))
	w.upload(t, "main", "osv-scanner", realSCA(t, "osv-scanner", osvGoAndCargo))
	byPkg, total := w.findings(t)
	if total != 2 || len(byPkg[gogo]) != 1 || len(byPkg[regex]) != 1 {
		t.Fatalf("findings after both scanners: %d %v", total, byPkg)
	}
	g := byPkg[gogo][0]
	if got := sourcesOf(g); got != "[{govulncheck GO-2021-0053} {osv-scanner GO-2021-0053}]" {
		t.Fatalf("sources: %s", got)
	}
	if g.CreatedAt != first.CreatedAt || g.ScanID != first.ID || g.CVE != "CVE-2021-3121" || g.Reachability.Status != "reachable" {
		t.Fatalf("the correlated finding: created %s by %s, cve %s, reachability %s", g.CreatedAt, g.ScanID, g.CVE, g.Reachability.Status)
	}
	if got := sourcesOf(byPkg[regex][0]); got != "[{osv-scanner GHSA-m5pq-gvj9-9vr8}]" {
		t.Fatalf("regex sources: %s", got)
	}
	testenv.Recount(t, st, w.company)

	// The same reports again change nothing.
	w.upload(t, "main", "govulncheck", realSCA(t, "govulncheck", govulncheckGogo))
	w.upload(t, "main", "osv-scanner", realSCA(t, "osv-scanner", osvGoAndCargo))
	if again, total := w.findings(t); total != 2 || sourcesOf(again[gogo][0]) != sourcesOf(g) || again[gogo][0].ID != g.ID {
		t.Fatalf("again: %d %v", total, again)
	}
	testenv.Recount(t, st, w.company)

	// OSV-Scanner stops reporting gogo/protobuf: the finding stays, with
	// govulncheck as its only source.
	w.upload(t, "main", "osv-scanner", osvWithoutGo(t))
	byPkg, total = w.findings(t)
	if total != 2 || len(byPkg[gogo]) != 1 || sourcesOf(byPkg[gogo][0]) != "[{govulncheck GO-2021-0053}]" || byPkg[gogo][0].Status != "open" {
		t.Fatalf("after OSV-Scanner stopped: %d %v", total, byPkg)
	}
	// govulncheck stops too: no source left.
	w.upload(t, "main", "govulncheck", nil)
	if byPkg, _ = w.findings(t); sourcesOf(byPkg[gogo][0]) != "[]" {
		t.Fatalf("after both stopped: %s", sourcesOf(byPkg[gogo][0]))
	}
	// And back: OSV-Scanner's report brings its source back to the same
	// finding.
	w.upload(t, "main", "osv-scanner", realSCA(t, "osv-scanner", osvGoAndCargo))
	if byPkg, total = w.findings(t); total != 2 || byPkg[gogo][0].ID != g.ID || sourcesOf(byPkg[gogo][0]) != "[{osv-scanner GO-2021-0053}]" {
		t.Fatalf("back: %d %v", total, byPkg)
	}
	testenv.Recount(t, st, w.company)

	// Another branch is another finding.
	w.upload(t, "dev", "osv-scanner", realSCA(t, "osv-scanner", osvGoAndCargo))
	if byPkg, total = w.findings(t); total != 4 || len(byPkg[gogo]) != 2 {
		t.Fatalf("another branch: %d", total)
	}
	testenv.Recount(t, st, w.company)
}

// Both scanners writing the same new vulnerability at once still make one
// finding (the alias claims decide); another company's identical reports
// are its own findings.
func TestSCACorrelationConcurrentAndIsolated(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	a := newSCAWorld(t, st, 42)
	for round := range 3 {
		branch := fmt.Sprintf("race-%d", round)
		var wg sync.WaitGroup
		for _, c := range [][2]string{{"govulncheck", govulncheckGogo}, {"osv-scanner", osvGoAndCargo}} {
			fs := realSCA(t, c[0], c[1])
			wg.Go(func() {
				ctx := context.Background()
				sc, err := st.Scans.CreateScan(ctx, scans.Scan{CompanyID: a.company, ProjectID: a.proj.ID, Branch: branch, Engine: c[0],
					Tool: c[0], Status: scans.ScanProcessing, CreatedAt: "2026-03-01T00:00:00Z"})
				if err == nil {
					err = scanlife.Write(ctx, scanlife.WritingOf(st), sc, a.proj, fs)
				}
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	byPkg, total := a.findings(t)
	if total != 6 || len(byPkg["github.com/gogo/protobuf"]) != 3 {
		t.Fatalf("after concurrent writes: %d %v", total, byPkg)
	}
	for _, i := range byPkg["github.com/gogo/protobuf"] {
		if got := sourcesOf(i); got != "[{govulncheck GO-2021-0053} {osv-scanner GO-2021-0053}]" {
			t.Fatalf("sources of %s on %s: %s", i.ID, i.Branch, got)
		}
	}
	testenv.Recount(t, st, a.company)

	b := newSCAWorld(t, st, 43)
	b.upload(t, "race-0", "osv-scanner", realSCA(t, "osv-scanner", osvGoAndCargo))
	other, total := b.findings(t)
	if total != 2 || sourcesOf(other["github.com/gogo/protobuf"][0]) != "[{osv-scanner GO-2021-0053}]" {
		t.Fatalf("another company: %d %v", total, other)
	}
	for _, i := range byPkg["github.com/gogo/protobuf"] {
		if _, err := st.SCA.GetSCAIssue(context.Background(), b.company, i.ID); err == nil {
			t.Fatal("another company reads the finding")
		}
	}
	testenv.Recount(t, st, a.company)
	testenv.Recount(t, st, b.company)
}

// Two findings created under disjoint ids (one scanner knew only the GO
// id, another only the CVE) stay two when a third reports both: it joins
// the first it finds, and its write never fails on the other's alias.
func TestSCADisjointAliasesStayTwo(t *testing.T) {
	t.Parallel()
	st := testenv.NewStore(t)
	w := newSCAWorld(t, st, 44)
	ctx := context.Background()
	put := func(tool string, ids ...string) {
		t.Helper()
		w.clock = w.clock.Add(time.Minute)
		sc, err := st.Scans.CreateScan(ctx, scans.Scan{CompanyID: w.company, ProjectID: w.proj.ID, Branch: "main", Engine: tool,
			Tool: tool, Status: scans.ScanProcessing, CreatedAt: w.clock.Format(time.RFC3339)})
		if err != nil {
			t.Fatal(err)
		}
		i := sca.Issue{ID: storefindings.IssueID(w.company, w.proj.ID, "main", tool, "sca:"+ids[0]+"|Go|example.com/m@v1.0.0"),
			ProjectID: w.proj.ID, Branch: "main", Tool: tool, IDs: ids, Classification: ids[0], Severity: "HIGH",
			Package: sca.Package{Name: "example.com/m", Version: "v1.0.0", Ecosystem: "Go"}}
		if err := st.SCA.PutScanSCAIssues(ctx, w.company, sc, []sca.Issue{i}); err != nil {
			t.Fatal(err)
		}
	}
	put("govulncheck", "GO-2099-0001")
	put("trivy", "CVE-2099-1")
	put("osv-scanner", "GO-2099-0001", "CVE-2099-1")
	byPkg, total := w.findings(t)
	if total != 2 || len(byPkg["example.com/m"]) != 2 {
		t.Fatalf("findings: %d", total)
	}
	joined := 0
	for _, i := range byPkg["example.com/m"] {
		if len(i.SourceList()) == 2 {
			joined++
		}
	}
	if joined != 1 {
		t.Fatalf("the third report joined %d findings", joined)
	}
	testenv.Recount(t, st, w.company)
}

package ingester_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/acme/codescan-api/functions/ingester"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// upload stores report as a processing scan of project on main, as POST
// /scan-upload does, and ingests it.
func upload(t *testing.T, env *testenv.Env, company, project int64, n int, engine, file string) scans.Scan {
	t.Helper()
	ctx := context.Background()
	report, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(report)
	digest := hex.EncodeToString(sum[:])
	id := fmt.Sprintf("6a1d2b3c-4d5e-4f60-8a7b-%012d", n)
	if err := testenv.Reports(t).Put(ctx, reportstore.ReportKey(company, id, digest), report); err != nil {
		t.Fatal(err)
	}
	_, err = env.Store.Scans.CreateScan(ctx, scans.Scan{ID: id, CompanyID: company, ProjectID: project, Branch: "main", Engine: engine,
		RunID: fmt.Sprintf("7b2e3c4d-5e6f-4a70-9b8c-%012d", n), ReportSHA256: digest, Tool: engine, Status: scans.ScanProcessing})
	if err != nil {
		t.Fatal(err)
	}
	in := &ingester.Ingester{Store: ingester.StoreOf(env.Store), Reports: testenv.Reports(t), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := in.Ingest(ctx, ingester.Job{CompanyID: company, ScanID: id}); err != nil {
		t.Fatal(err)
	}
	got, err := env.Store.Scans.GetScan(ctx, company, id)
	if err != nil || got.Status != scans.ScanComplete {
		t.Fatalf("scan %s: %+v %v", id, got, err)
	}
	return got
}

func eventID(advisory, pkg string) string {
	sum := sha256.Sum256([]byte(advisory + " " + pkg))
	return "component_affected-" + hex.EncodeToString(sum[:16])
}

// An SBOM's components are kept as its engine's set on the branch; a
// govulncheck report's advisories find every holder of an affected
// version (the SBOM's project too) and announce them once.
func TestUploadsKeepComponentsAndAnnounceTheBlastRadius(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	c := env.Company(t, "Inventory Inc")
	project := func(name string) schema.Project {
		p, err := env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: c.ID, Name: name, DefaultBranch: "main"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	api, worker := project("api"), project("worker")
	sbom := upload(t, env, c.ID, api.ID, 1, "cyclonedx", "../../shared/reports/testdata/components/calls.cdx.json")
	hs, _, err := env.Store.Components.HoldersOf(ctx, c.ID, "pkg:golang/github.com/tidwall/gjson", "v1.6.0", 10)
	if err != nil || len(hs) != 1 || hs[0].ProjectID != api.ID || hs[0].Relation != "direct" || hs[0].ScanID != sbom.ID || hs[0].Engine != "cyclonedx" {
		t.Fatalf("SBOM holders: %+v %v", hs, err)
	}
	// The SBOM brings no advisory: no event yet.
	gjson := "pkg:golang/github.com/tidwall/gjson"
	if _, ok := testenv.OutboxEvent(t, env.Store, c.ID, eventID("GO-2021-0054", gjson)); ok {
		t.Fatal("an event before any advisory")
	}
	upload(t, env, c.ID, worker.ID, 2, "govulncheck", "../../shared/reports/govulncheck/testdata/calls.json")
	data, ok := testenv.OutboxEvent(t, env.Store, c.ID, eventID("GO-2021-0054", gjson))
	if !ok {
		t.Fatal("no component_affected event for GO-2021-0054")
	}
	holders, _ := data["holders"].([]any)
	if data["package"] != gjson || data["total_holders"] != float64(2) || len(holders) != 2 || fmt.Sprint(data["affected_versions"]) != "[v1.6.0]" {
		t.Fatalf("event data: %v", data)
	}
	// x/text v0.3.5 lies outside GO-2020-0015 (fixed in 0.3.3).
	if _, ok := testenv.OutboxEvent(t, env.Store, c.ID, eventID("GO-2020-0015", "pkg:golang/golang.org/x/text")); ok {
		t.Error("an event for an advisory no holder is affected by")
	}
	// A later upload of the same report changes nothing and announces
	// nothing again.
	upload(t, env, c.ID, worker.ID, 3, "govulncheck", "../../shared/reports/govulncheck/testdata/calls.json")
	vs, err := env.Store.Components.PackageVersions(ctx, c.ID, gjson)
	if err != nil || len(vs) != 1 || vs[0].Holders != 2 {
		t.Fatalf("gjson versions: %+v %v", vs, err)
	}
	testenv.Recount(t, env.Store, c.ID)
}

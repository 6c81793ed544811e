package scheduler_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/store"
	storecomponents "github.com/acme/codescan-api/shared/store/components"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
)

// affectedEvents are the ids of the company's component_affected events.
func affectedEvents(t *testing.T, st *store.Store, companyID int64) []string {
	t.Helper()
	out, err := st.Client().Query(context.Background(), &dynamodb.QueryInput{
		TableName: aws.String(st.TableName()), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)},
			":sk": &types.AttributeValueMemberS{Value: "EVENT#" + ingest.TypeComponentAffected + "-"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range out.Items {
		ids = append(ids, it["SK"].(*types.AttributeValueMemberS).Value)
	}
	return ids
}

// When a CVE enters KEV, the companies whose SCA findings name it hear of
// every project holding an affected version of the findings' package
// (below the finding's fix version), once; a company without such a
// finding hears nothing, however many affected versions it holds; the
// first import is the baseline; a run again records nothing.
func TestKEVArrivalAnnouncesTheBlastRadius(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	st := env.Store
	ctx := context.Background()
	const cve = "CVE-2025-5419" // only in the second catalogue
	a, b := env.Company(t, "Holders A"), env.Company(t, "Holders B")
	project := func(c int64, name string) schema.Project {
		t.Helper()
		p, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: c, Name: name, DefaultBranch: "main"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	scan := 0
	hold := func(p schema.Project, engine, version string) {
		t.Helper()
		c, err := components.New("pkg:npm/foo@"+version, "", components.Direct, nil)
		if err != nil {
			t.Fatal(err)
		}
		scan++
		ref := storecomponents.SetRef{CompanyID: p.CompanyID, ProjectID: p.ID, ProjectName: p.Name, Branch: "main", Engine: engine,
			ScanID: fmt.Sprintf("5c0e1f2a-3b4c-4d5e-8f60-%012d", scan), ScanAt: time.Date(2026, 10, 1, 0, 0, scan, 0, time.UTC)}
		if _, err := st.Components.ReplaceComponents(ctx, ref, []components.Component{c}); err != nil {
			t.Fatal(err)
		}
	}
	finding := func(p schema.Project, cve, version, fix string) {
		t.Helper()
		_, err := st.SCA.PutSCAIssue(ctx, p.CompanyID, sca.Issue{ProjectID: p.ID, Branch: "main", Tool: "osv-scanner", CVE: cve,
			Classification: "GHSA-kev0-test-0001", IDs: []string{"GHSA-kev0-test-0001", cve}, Severity: "HIGH", Status: "open",
			Package: sca.Package{Name: "foo", Version: version, Ecosystem: "npm", FixVersion: fix}})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A: P1 reports the CVE in foo 1.0.0 (its scan listed the package),
	// P2 holds 1.1.0 from an SBOM only, P3 the fixed 1.2.0.
	p1, p2, p3 := project(a.ID, "p1"), project(a.ID, "p2"), project(a.ID, "p3")
	finding(p1, cve, "1.0.0", "1.2.0")
	hold(p1, "osv-scanner", "1.0.0")
	hold(p2, "cyclonedx", "1.1.0")
	hold(p3, "cyclonedx", "1.2.0")
	// B holds 1.1.0 too, and has a finding of foo, but of a CVE in both
	// catalogues (never newly in KEV).
	q1 := project(b.ID, "q1")
	hold(q1, "cyclonedx", "1.1.0")
	finding(q1, "CVE-2024-57727", "1.1.0", "")

	f := newFeedServer(t)
	f.set("/kev.json", feedFile(t, "kev-2025-05-22-excerpt.json"))
	f.set("/epss.csv", testenv.Gzip(t, feedFile(t, "epss_scores-2026-09-29-excerpt.csv")))
	if _, err := scheduler.ImportExploits(ctx, scheduler.StoreOf(st), f.feeds()); err != nil {
		t.Fatal(err)
	}
	if ids := append(affectedEvents(t, st, a.ID), affectedEvents(t, st, b.ID)...); len(ids) != 0 {
		t.Fatalf("the baseline import announced %v", ids)
	}

	f.set("/kev.json", feedFile(t, "kev-2025-06-09-excerpt.json"))
	if _, err := scheduler.ImportExploits(ctx, scheduler.StoreOf(st), f.feeds()); err != nil {
		t.Fatal(err)
	}
	id := ingest.AffectedEventID(ingest.TriggerKEV, components.Advisory{ID: cve, Package: "pkg:npm/foo"})
	if ids := affectedEvents(t, st, a.ID); len(ids) != 1 || ids[0] != "EVENT#"+id {
		t.Fatalf("A's events: %v, want %s", ids, id)
	}
	data, _ := testenv.OutboxEvent(t, st, a.ID, id)
	var named []float64
	for _, h := range data["holders"].([]any) {
		named = append(named, h.(map[string]any)["project_id"].(float64))
	}
	slices.Sort(named)
	if data["advisory_id"] != cve || data["trigger"] != "kev" || data["package"] != "pkg:npm/foo" || data["ecosystem"] != "npm" ||
		fmt.Sprint(data["aliases"]) != "[GHSA-kev0-test-0001]" || fmt.Sprint(data["affected_versions"]) != "[1.0.0 1.1.0]" ||
		data["total_holders"] != float64(2) || fmt.Sprint(named) != fmt.Sprint([]float64{float64(p1.ID), float64(p2.ID)}) ||
		data["scan_id"] != nil || data["project_id"] != nil {
		t.Errorf("event data: %v", data)
	}
	if ids := affectedEvents(t, st, b.ID); len(ids) != 0 {
		t.Errorf("B, without a finding of %s, heard %v", cve, ids)
	}

	// The job again: nothing new recorded, nothing written.
	var m ddb.Meter
	if _, err := scheduler.ImportExploits(ddb.WithMeter(ctx, &m), scheduler.StoreOf(st), f.feeds()); err != nil {
		t.Fatal(err)
	}
	if _, _, wcu := m.Snapshot(); wcu != 0 {
		t.Errorf("the same import again wrote %.1f WCU", wcu)
	}
	if ids := affectedEvents(t, st, a.ID); len(ids) != 1 {
		t.Errorf("A's events after a run again: %v", ids)
	}
}

// The KEV trigger's blast radius, run twice for one company, CVE and
// package, records once; it is another event than an upload's of the
// same advisory.
func TestKEVBlastRadiusRecordsOnce(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	st := env.Store
	ctx := context.Background()
	c := env.Company(t, "Once Inc")
	p, err := st.Catalog.CreateProject(ctx, schema.Project{CompanyID: c.ID, Name: "api", DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	comp, err := components.New("pkg:npm/foo@1.1.0", "", components.Direct, nil)
	if err != nil {
		t.Fatal(err)
	}
	ref := storecomponents.SetRef{CompanyID: c.ID, ProjectID: p.ID, ProjectName: p.Name, Branch: "main", Engine: "cyclonedx",
		ScanID: "5c0e1f2a-3b4c-4d5e-8f60-000000000001", ScanAt: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := st.Components.ReplaceComponents(ctx, ref, []components.Component{comp}); err != nil {
		t.Fatal(err)
	}
	adv, err := components.FromFinding("CVE-2099-0001", nil, "npm", "foo", "1.0.0", "1.2.0")
	if err != nil {
		t.Fatal(err)
	}
	kev := ingest.Arrival{CompanyID: c.ID, Trigger: ingest.TriggerKEV}
	for n, want := range []bool{true, false} {
		if got, err := ingest.BlastRadius(ctx, ingest.AffectedStoreOf(st), kev, adv); err != nil || got != want {
			t.Fatalf("run %d: recorded %t (%v), want %t", n+1, got, err, want)
		}
	}
	if ingest.AffectedEventID(ingest.TriggerKEV, adv) == ingest.AffectedEventID(ingest.TriggerUpload, adv) {
		t.Error("the KEV trigger's event id is the upload's")
	}
	if ids := affectedEvents(t, st, c.ID); len(ids) != 1 {
		t.Errorf("events: %v", ids)
	}
}

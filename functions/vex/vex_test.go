package vex_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/acme/codescan-api/functions/vex"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// goVEX is the real OpenVEX document of openvex/go-vex (shared/vex's
// testdata): CVE-2023-3446 and CVE-2023-3817 not_affected in Alpine's
// libssl3 and libcrypto3 3.0.8-r3, three CVEs fixed.
const goVEXID = "https://openvex.dev/docs/public/vex-d4e9020b6d0d26f131d535e055902dd6ccf3e2088bce3079a8cd3588a4b14c78"

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../shared/vex/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type tenant struct {
	co        *testenv.Company
	triager   testenv.User
	viewer    testenv.User
	web, lib  schema.Project
	findings  map[string]string // name -> id
	statusAt0 map[string]string // name -> status as seeded
}

type world struct {
	env *testenv.Env
	h   http.Handler
}

// seed gives a company two projects and the SCA findings named below, the
// same in every company.
func (w *world) tenant(t *testing.T, name string) *tenant {
	t.Helper()
	ctx := context.Background()
	tn := &tenant{co: w.env.Company(t, name), findings: map[string]string{}, statusAt0: map[string]string{}}
	tn.triager = w.env.User(t, tn.co, testenv.UserSpec{Email: "triager@" + strings.ToLower(name) + ".test", Permissions: []string{routes.PermTriageIssue}})
	tn.viewer = w.env.User(t, tn.co, testenv.UserSpec{Email: "viewer@" + strings.ToLower(name) + ".test"})
	var err error
	if tn.web, err = w.env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: tn.co.ID, Name: "web"}); err != nil {
		t.Fatal(err)
	}
	if tn.lib, err = w.env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: tn.co.ID, Name: "lib"}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		name    string
		project schema.Project
		branch  string
		eco     string
		pkg     string
		version string
		status  string
		ids     []string
	}{
		{"ssl-3446", tn.web, "main", "Alpine:v3.17", "libssl3", "3.0.8-r3", "open", []string{"ALPINE-CVE-2023-3446", "CVE-2023-3446"}},
		{"crypto-3817", tn.web, "main", "Alpine:v3.17", "libcrypto3", "3.0.8-r3", "fix_in_progress", []string{"CVE-2023-3817"}},
		{"ssl-1255", tn.web, "main", "Alpine:v3.17", "libssl3", "3.0.8-r3", "open", []string{"CVE-2023-1255"}},
		{"ssl-newer", tn.web, "main", "Alpine:v3.17", "libssl3", "3.0.8-r4", "open", []string{"CVE-2023-3446"}},
		{"crypto-accepted", tn.web, "dev", "Alpine:v3.17", "libcrypto3", "3.0.8-r3", "accepted_risk", []string{"CVE-2023-3817"}},
		{"lib-ssl-3446", tn.lib, "main", "Alpine:v3.17", "libssl3", "3.0.8-r3", "open", []string{"CVE-2023-3446"}},
		{"jackson", tn.lib, "main", "Maven", "com.fasterxml.jackson.core:jackson-databind", "2.10.0", "open", []string{"GHSA-288c-cq4h-88gq", "CVE-2020-25649"}},
	} {
		i, err := w.env.Store.SCA.PutSCAIssue(ctx, tn.co.ID, sca.Issue{ProjectID: f.project.ID, Branch: f.branch, Tool: "osv-scanner",
			IDs: f.ids, Classification: f.ids[0], CVE: f.ids[len(f.ids)-1], Severity: "HIGH", Status: f.status, Description: f.pkg,
			Package: sca.Package{Name: f.pkg, Version: f.version, Ecosystem: f.eco}, Location: sca.Location{Path: "lockfile"}})
		if err != nil {
			t.Fatal(err)
		}
		tn.findings[f.name], tn.statusAt0[f.name] = i.ID, f.status
	}
	return tn
}

// importAnswer mirrors the answer (the OpenAPI document checks the rest).
type importAnswer struct {
	DryRun   bool `json:"dry_run"`
	Document struct {
		ID, Format string
		Statements int
	} `json:"document"`
	Summary struct {
		FindingsRead                         int `json:"findings_read"`
		Matched, Changed, Unchanged, Skipped int
	} `json:"summary"`
	Statements []struct {
		Pointer  string `json:"pointer"`
		Status   string `json:"status"`
		Matched  int    `json:"matched"`
		Changed  int    `json:"changed"`
		Skipped  int    `json:"skipped"`
		Findings []struct {
			ID, From, To, Result, Reason, Why string
		} `json:"findings"`
	} `json:"statements"`
}

func (w *world) post(t *testing.T, u testenv.User, query, body string, want int) (*testenv.Response, importAnswer) {
	t.Helper()
	res := testenv.Do(t, w.h, "POST", "/vex"+query, body, testenv.Key(u)...)
	if res.Status != want {
		t.Fatalf("POST /vex%s: %d %s, want %d", query, res.Status, res.Body, want)
	}
	var a importAnswer
	if want == http.StatusOK {
		res.Decode(t, &a)
	}
	return res, a
}

// statuses are the company's findings' statuses and reasons by name.
func (w *world) statuses(t *testing.T, tn *tenant) map[string]sca.Issue {
	t.Helper()
	out := map[string]sca.Issue{}
	for name, id := range tn.findings {
		i, err := w.env.Store.SCA.GetSCAIssue(context.Background(), tn.co.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = i
	}
	return out
}

func (w *world) audit(t *testing.T, tn *tenant) []tenancy.AuditRecord {
	t.Helper()
	entriesPage, err := w.env.Store.Tenancy.ListAudit(context.Background(), tn.co.ID, tenancy.AuditFilter{Action: "vex.import"}, page.Request{Limit: 50})
	entries := entriesPage.Items
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// wantStatuses fails unless the company's findings have exactly the
// statuses given, the others those they were seeded with.
func (w *world) wantStatuses(t *testing.T, tn *tenant, changed map[string]string) {
	t.Helper()
	for name, i := range w.statuses(t, tn) {
		want, ok := changed[name]
		if !ok {
			want = tn.statusAt0[name]
		}
		if i.Status != want {
			t.Errorf("%s: %s %q, want %s", name, i.Status, i.Reason, want)
		}
	}
}

// The real go-vex document: a dry run answers exactly what the apply then
// changes, and changes nothing; the apply changes exactly the named
// findings (the not_affected statements' advisories in their packages and
// version, open or fix_in_progress) with a reason naming the document, in
// one audited write; a second apply changes nothing; another company's
// identical findings are untouched until its own import; counts exact.
func TestImportDryRunThenApply(t *testing.T) {
	t.Parallel()
	w := &world{env: testenv.New(t)}
	w.h = vex.New(w.env.Deps)
	acme, rival := w.tenant(t, "Acme"), w.tenant(t, "Rival")
	doc := fixture(t, "openvex/go-vex-v0.2.0.json")
	dismissed := map[string]string{"ssl-3446": "false_positive", "crypto-3817": "false_positive", "lib-ssl-3446": "false_positive"}

	_, dry := w.post(t, acme.triager, "?dry_run=true", doc, http.StatusOK)
	if !dry.DryRun || dry.Document.ID != goVEXID || dry.Document.Format != "openvex" || dry.Document.Statements != 5 || len(dry.Statements) != 5 {
		t.Fatalf("dry run document: %+v", dry)
	}
	s := dry.Summary
	if s.FindingsRead != 7 || s.Matched != 5 || s.Changed != 3 || s.Unchanged != 0 || s.Skipped != 2 {
		t.Fatalf("dry run summary: %+v", s)
	}
	planned := map[string]string{}
	for _, st := range dry.Statements {
		for _, f := range st.Findings {
			if f.Result == "changed" {
				planned[f.ID] = f.To
			}
		}
	}
	w.wantStatuses(t, acme, nil)
	if len(w.audit(t, acme)) != 0 {
		t.Fatal("a dry run was audited")
	}
	// Statement 3 (CVE-2023-3446) names both projects' libssl3 3.0.8-r3,
	// not 3.0.8-r4; statement 0 (fixed) skips CVE-2023-1255.
	if st := dry.Statements[3]; st.Status != "not_affected" || st.Matched != 2 || st.Changed != 2 {
		t.Errorf("statement 3: %+v", st)
	}
	if st := dry.Statements[0]; st.Status != "fixed" || st.Matched != 1 || st.Skipped != 1 || st.Findings[0].Why != "fixed: left to the scans" {
		t.Errorf("statement 0: %+v", st)
	}

	_, applied := w.post(t, acme.triager, "", doc, http.StatusOK)
	if applied.DryRun || applied.Summary != dry.Summary {
		t.Fatalf("apply summary %+v, dry run %+v", applied.Summary, dry.Summary)
	}
	got := w.statuses(t, acme)
	for name, to := range dismissed {
		if planned[acme.findings[name]] != to {
			t.Errorf("%s: the dry run planned %q", name, planned[acme.findings[name]])
		}
		if r := got[name].Reason; !strings.HasPrefix(r, "VEX not_affected: vulnerable_code_not_present: ") || !strings.HasSuffix(r, "(from VEX "+goVEXID+")") {
			t.Errorf("%s: reason %q", name, r)
		}
	}
	w.wantStatuses(t, acme, dismissed)
	w.wantStatuses(t, rival, nil)
	entries := w.audit(t, acme)
	if len(entries) != 1 || entries[0].TargetID != goVEXID || entries[0].Actor.UserID != acme.triager.ID ||
		fmt.Sprint(entries[0].Changes["sca_findings_changed"].After) != "3" {
		t.Fatalf("audit %+v", entries)
	}

	_, again := w.post(t, acme.triager, "", doc, http.StatusOK)
	if s := again.Summary; s.Matched != 5 || s.Changed != 0 || s.Unchanged != 3 || s.Skipped != 2 {
		t.Fatalf("second apply: %+v", s)
	}
	if len(w.audit(t, acme)) != 1 {
		t.Fatal("an apply that changed nothing was audited")
	}
	w.wantStatuses(t, acme, dismissed)

	// The rival's own import reaches its own findings only.
	_, r := w.post(t, rival.triager, "?project_id="+fmt.Sprint(rival.web.ID), doc, http.StatusOK)
	if r.Summary.FindingsRead != 5 || r.Summary.Changed != 2 {
		t.Fatalf("rival's import of its project web: %+v", r.Summary)
	}
	w.wantStatuses(t, rival, map[string]string{"ssl-3446": "false_positive", "crypto-3817": "false_positive"})
	w.wantStatuses(t, acme, dismissed)
	testenv.Recount(t, w.env.Store, acme.co.ID)
	testenv.Recount(t, w.env.Store, rival.co.ID)
}

// A CycloneDX VEX (the real bom-examples document) dismisses the Maven
// finding its BOM-Link names; a later OpenVEX statement that the package
// is affected opens it again; project_id limits the import to a project,
// and another company's project answers as a missing one.
func TestCycloneDXThenAffectedReopens(t *testing.T) {
	t.Parallel()
	w := &world{env: testenv.New(t)}
	w.h = vex.New(w.env.Deps)
	acme, rival := w.tenant(t, "Acme"), w.tenant(t, "Rival")

	for _, id := range []int64{rival.lib.ID, 999_999} {
		res, _ := w.post(t, acme.triager, fmt.Sprintf("?project_id=%d", id), fixture(t, "cyclonedx/vex.json"), http.StatusNotFound)
		if res.JSON(t)["error"] != "Project not found" {
			t.Fatalf("project %d: %s", id, res.Body)
		}
	}
	_, web := w.post(t, acme.triager, fmt.Sprintf("?project_id=%d", acme.web.ID), fixture(t, "cyclonedx/vex.json"), http.StatusOK)
	if web.Summary.FindingsRead != 5 || web.Summary.Matched != 0 {
		t.Fatalf("project web: %+v", web.Summary)
	}
	_, a := w.post(t, acme.triager, "?format=cyclonedx", fixture(t, "cyclonedx/vex.json"), http.StatusOK)
	if a.Document.Format != "cyclonedx" || a.Summary.Changed != 1 || a.Statements[0].Findings[0].ID != acme.findings["jackson"] {
		t.Fatalf("CycloneDX import: %+v", a)
	}
	w.wantStatuses(t, acme, map[string]string{"jackson": "false_positive"})

	affected := `{"@context":"https://openvex.dev/ns/v0.2.0","@id":"https://example.com/vex/jackson-2","author":"Acme PSIRT",` +
		`"timestamp":"2026-11-01T00:00:00Z","version":2,"statements":[{"vulnerability":{"@id":"https://nvd.nist.gov/vuln/detail/CVE-2020-25649","name":"CVE-2020-25649"},` +
		`"products":[{"@id":"pkg:docker/acme/lib","subcomponents":[{"@id":"pkg:maven/com.fasterxml.jackson.core/jackson-databind"}]}],` +
		`"status":"affected","action_statement":"Upgrade jackson-databind to 2.10.5.1"}]}`
	_, re := w.post(t, acme.triager, "", affected, http.StatusOK)
	if re.Summary.Changed != 1 || re.Statements[0].Findings[0].To != "open" {
		t.Fatalf("affected: %+v", re)
	}
	got := w.statuses(t, acme)["jackson"]
	if got.Status != "open" || got.Reason != "VEX affected: Upgrade jackson-databind to 2.10.5.1 (from VEX https://example.com/vex/jackson-2)" {
		t.Fatalf("reopened: %s %q", got.Status, got.Reason)
	}
	if len(w.audit(t, acme)) != 2 {
		t.Fatalf("audit: %+v", w.audit(t, acme))
	}
	w.wantStatuses(t, rival, nil)
	testenv.Recount(t, w.env.Store, acme.co.ID)
}

// Bad input answers 4xx in the route's error form and stores nothing:
// a document that fails its schema (naming the pointer), malformed JSON,
// a malformed purl, an unknown format, too many statements; a user
// without issues.triage_issue gets 403.
func TestRefusalsStoreNothing(t *testing.T) {
	t.Parallel()
	w := &world{env: testenv.New(t)}
	w.h = vex.New(w.env.Deps)
	acme := w.tenant(t, "Acme")
	doc := fixture(t, "openvex/go-vex-v0.2.0.json")
	many := strings.Replace(doc, `"statements": [`, `"statements": [`+strings.Repeat(`{"vulnerability":{"name":"CVE-1"},"products":[{"@id":"pkg:npm/a"}],"status":"fixed"},`, 10_000), 1)
	for _, tc := range []struct {
		name, query, body string
		user              testenv.User
		status            int
		msg               string
	}{
		{"schema", "", fixture(t, "openvex/go-vex-v0.0.1.json"), acme.triager, 400, "/statements/0/products/0: fails the schema: got string, want object"},
		{"schema of a real vexctl example", "?dry_run=true", fixture(t, "openvex/vexctl-sample-2vulns.json"), acme.triager, 400, "/statements/0: fails the schema: additional properties 'statement' not allowed"},
		{"malformed JSON", "", doc[:200], acme.triager, 400, "Invalid JSON body"},
		{"malformed purl", "", strings.Replace(doc, "pkg:apk/alpine/libssl3@3.0.8-r3", "pkg:apk/alpine/%zz@3", 1), acme.triager, 400,
			"/statements/0/products/0/subcomponents/0/@id: malformed package URL"},
		{"undetectable", "", `{"vulnerabilities":[]}`, acme.triager, 400, "format: the document is neither CycloneDX"},
		{"unknown format", "?format=csaf", doc, acme.triager, 400, "format"},
		{"too many statements", "", many, acme.triager, 413, "/statements: may hold at most 10000 entries"},
		{"no permission", "", doc, acme.viewer, 403, "Permission denied"},
	} {
		res, _ := w.post(t, tc.user, tc.query, tc.body, tc.status)
		if msg, _ := res.JSON(t)["error"].(string); !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: %s, want …%s…", tc.name, res.Body, tc.msg)
		}
	}
	w.wantStatuses(t, acme, nil)
	if len(w.audit(t, acme)) != 0 {
		t.Fatal("a refused import was audited")
	}
	testenv.Recount(t, w.env.Store, acme.co.ID)
}

package issues_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/exploitfeed"
	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
	storefindings "github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// scaView is what the SLA test reads of an SCA finding.
type scaView struct {
	ID           string  `json:"id"`
	Status       string  `json:"status"`
	Reason       *string `json:"reason"`
	TriageRuleID *string `json:"triage_rule_id"`
	SLADeadline  *string `json:"sla_deadline"`
	SLAStatus    *string `json:"sla_status"`
}

// clockedWorld is newWorld on a store and handlers reading *now.
func clockedWorld(t *testing.T, now *time.Time, names ...string) []*world {
	t.Helper()
	env := testenv.New(t)
	st := store.New(env.Store.Client(), env.Store.TableName(), store.WithClock(func() time.Time { return *now }))
	env.Store, env.Deps.Store = st, st
	env.Deps.Now = func() time.Time { return *now }
	var out []*world
	for n, name := range names {
		out = append(out, newWorld(t, env, name, 0, uint64(40+n)))
	}
	return out
}

// scanSCA writes findings (package name, CVE, severity) as a scan of the
// project on branch would, and returns the scan and the findings' ids in
// that order.
func (w *world) scanSCA(t *testing.T, projectID int64, branch string, findings ...[3]string) (scans.Scan, []string) {
	t.Helper()
	ctx := context.Background()
	sc, err := w.env.Store.Scans.CreateScan(ctx, scans.Scan{CompanyID: w.company.ID, ProjectID: projectID, Branch: branch, Engine: "osv", Tool: "osv-scanner"})
	if err != nil {
		t.Fatal(err)
	}
	var found []sca.Issue
	var ids []string
	for _, f := range findings {
		id := storefindings.IssueID(w.company.ID, projectID, branch, "osv-scanner", f[0]+"|"+f[1])
		found = append(found, sca.Issue{ID: id, ProjectID: projectID, Branch: branch, Tool: "osv-scanner", CVE: f[1], Classification: f[1],
			Severity: f[2], Package: sca.Package{Name: f[0], Version: "1.0.0", Ecosystem: "npm"}, Location: sca.Location{Path: "package-lock.json"}})
		ids = append(ids, id)
	}
	if err := w.env.Store.SCA.PutScanSCAIssues(ctx, w.company.ID, sc, found); err != nil {
		t.Fatal(err)
	}
	return sc, ids
}

func importKEV(t *testing.T, st *store.Store, kevFile string) {
	t.Helper()
	kf, err := os.Open("../../shared/exploitfeed/testdata/" + kevFile)
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	cat, err := exploitfeed.ParseKEV(kf)
	if err != nil {
		t.Fatal(err)
	}
	_, scores := parseFeeds(t, "")
	if _, err := st.Exploits.Import(context.Background(), cat, scores); err != nil {
		t.Fatal(err)
	}
}

// An SCA finding's SLA deadline is its first detection plus the company's
// days for its severity's urgency, or its CVE's KEV due date when that is
// earlier: a KEV import that lists the CVE with an earlier due date moves
// the deadline to it, a later one leaves it; a settings change moves it
// with nothing rewritten; the status turns overdue at the deadline on a
// controlled clock. A finding a triage rule dismissed has none. Every
// SCA route shows the same, validated against the OpenAPI document.
func TestSCASLADeadlineFollowsKEV(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
	ws := clockedWorld(t, &now, "Acme", "Other")
	w, other := ws[0], ws[1]
	st := w.env.Store
	m, a, err := triagemodel.Parse(triagemodel.Body{Matcher: &triagemodel.MatcherBody{Package: new("fixture-lib")},
		Action: &triagemodel.ActionBody{Status: new("false_positive"), Reason: new("test fixture only")}}, now)
	if err != nil {
		t.Fatal(err)
	}
	rule, err := st.Triage.CreateTriageRule(ctx, triage.Rule{CompanyID: w.company.ID, CreatedBy: w.company.Admin.ID, Enabled: true, Matcher: m, Action: a})
	if err != nil {
		t.Fatal(err)
	}
	sc, ids := w.scanSCA(t, w.projects[0].ID, "main",
		[3]string{"chromium", "CVE-2025-5419", "HIGH"},          // KEV (from 06-09) due 2025-06-26, before its 30 days
		[3]string{"qualcomm", "CVE-2025-21479", "CRITICAL"},     // KEV due 2025-06-24, after its 7 days
		[3]string{"nothing", "CVE-2099-0001", "UNSPECIFIED"},    // not in KEV: medium's 90 days
		[3]string{"chromium-lite", "CVE-2025-5419", "moderate"}, // medium, KEV earlier
		[3]string{"fixture-lib", "CVE-2025-5419", "HIGH"},       // dismissed by the rule
	)
	chromium, qualcomm, nothing, lite, fixture := ids[0], ids[1], ids[2], ids[3], ids[4]

	// Every route that shows SCA findings shows the same SLA.
	views := func() map[string]scaView {
		t.Helper()
		out := map[string]scaView{}
		var p struct{ Issues []scaView }
		w.get(t, "/scan/"+sc.ID+"/issues/sca", nil).Decode(t, &p)
		for _, v := range p.Issues {
			out[v.ID] = v
		}
		for _, path := range []string{"/issues/sca", "/issues/sca?project=web"} {
			var l struct{ Issues []scaView }
			w.get(t, path, nil).Decode(t, &l)
			for _, v := range l.Issues {
				if !eqView(out[v.ID], v) {
					t.Errorf("%s shows %s as %+v, the scan's list as %+v", path, v.ID, v, out[v.ID])
				}
			}
		}
		for _, id := range ids {
			for _, path := range []string{"/issues/sca/" + id, "/issue/" + id} {
				var one struct{ Issue scaView }
				w.get(t, path, nil).Decode(t, &one)
				if !eqView(one.Issue, out[id]) {
					t.Errorf("%s: %+v, the list: %+v", path, one.Issue, out[id])
				}
			}
		}
		return out
	}
	check := func(when string, want map[string][2]string) {
		t.Helper()
		got := views()
		for id, d := range want {
			v := got[id]
			if d[0] == "" {
				if v.SLADeadline != nil || v.SLAStatus != nil {
					t.Errorf("%s: %s has a deadline %s %s", when, id, deref(v.SLADeadline), deref(v.SLAStatus))
				}
				continue
			}
			if v.SLADeadline == nil || *v.SLADeadline != d[0] || v.SLAStatus == nil || *v.SLAStatus != d[1] {
				t.Errorf("%s: %s shows %v %v, want %v", when, id, deref(v.SLADeadline), deref(v.SLAStatus), d)
			}
		}
	}
	fx := views()[fixture]
	if fx.Status != "false_positive" || deref(fx.Reason) != "test fixture only" || deref(fx.TriageRuleID) != rule.ID {
		t.Fatalf("the rule's finding: %+v", fx)
	}
	if v := views()[chromium]; v.Status != "open" || v.Reason != nil || v.TriageRuleID != nil {
		t.Fatalf("an open finding: %+v", v)
	}
	bySLA := map[string][2]string{
		chromium: {"2025-07-01T10:00:00Z", sla.OnTrack}, qualcomm: {"2025-06-08T10:00:00Z", sla.OnTrack},
		nothing: {"2025-08-30T10:00:00Z", sla.OnTrack}, lite: {"2025-08-30T10:00:00Z", sla.OnTrack}, fixture: {},
	}
	check("never enriched", bySLA)
	importKEV(t, st, "kev-2025-05-22-excerpt.json") // lists none of them
	check("not in KEV", bySLA)

	importKEV(t, st, "kev-2025-06-09-excerpt.json")
	withKEV := map[string][2]string{
		chromium: {"2025-06-26T00:00:00Z", sla.OnTrack}, qualcomm: {"2025-06-08T10:00:00Z", sla.OnTrack},
		nothing: {"2025-08-30T10:00:00Z", sla.OnTrack}, lite: {"2025-06-26T00:00:00Z", sla.OnTrack}, fixture: {},
	}
	check("in KEV", withKEV)

	now = time.Date(2025, 6, 25, 23, 59, 59, 0, time.UTC)
	withKEV[qualcomm] = [2]string{"2025-06-08T10:00:00Z", sla.Overdue}
	// Inside the company's due-soon days (3) before the KEV due date.
	withKEV[chromium], withKEV[lite] = [2]string{"2025-06-26T00:00:00Z", sla.DueSoon}, [2]string{"2025-06-26T00:00:00Z", sla.DueSoon}
	check("the second before the KEV due date", withKEV)
	now = time.Date(2025, 6, 26, 0, 0, 0, 0, time.UTC)
	withKEV[chromium], withKEV[lite] = [2]string{"2025-06-26T00:00:00Z", sla.Overdue}, [2]string{"2025-06-26T00:00:00Z", sla.Overdue}
	check("at the KEV due date", withKEV)

	// Ten days for HI: earlier than KEV's date, read at once.
	s := sla.Defaults()
	s.DaysToFix["HI"] = 10
	if err := st.Catalog.PutSLASettings(ctx, w.company.ID, s); err != nil {
		t.Fatal(err)
	}
	withKEV[chromium] = [2]string{"2025-06-11T10:00:00Z", sla.Overdue}
	check("HI in 10 days", withKEV)

	// Another company: a missing finding, and its own settings.
	missing := other.get(t, "/issues/sca/"+storefindings.IssueID(other.company.ID, 1, "main", "osv-scanner", "x"), nil)
	for _, path := range []string{"/issues/sca/" + chromium, "/scan/" + sc.ID + "/issues/sca"} {
		res := other.get(t, path, nil)
		if res.Status != 404 || (strings.HasPrefix(path, "/issues/") && string(res.Body) != string(missing.Body)) {
			t.Errorf("%s by another company: %d %s", path, res.Status, res.Body)
		}
	}
	_, oids := other.scanSCA(t, other.projects[0].ID, "main", [3]string{"chromium", "CVE-2025-5419", "HIGH"})
	var one struct{ Issue scaView }
	other.get(t, "/issues/sca/"+oids[0], nil).Decode(t, &one)
	if deref(one.Issue.SLADeadline) != "2025-06-26T00:00:00Z" || one.Issue.Status != "open" {
		t.Errorf("another company's finding: %+v", one.Issue)
	}
}

func eqView(a, b scaView) bool {
	return a.ID == b.ID && a.Status == b.Status && deref(a.Reason) == deref(b.Reason) && deref(a.TriageRuleID) == deref(b.TriageRuleID) &&
		deref(a.SLADeadline) == deref(b.SLADeadline) && deref(a.SLAStatus) == deref(b.SLAStatus)
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

package issues_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/functions/notifications"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/triage"
)

// acceptWorld is a company with three open issues on a controlled clock,
// the store and the handlers reading the same clock.
type acceptWorld struct {
	env          *testenv.Env
	st           *store.Store
	h, settings  http.Handler
	now          time.Time
	acme, other  *testenv.Company
	owner        testenv.User
	a, b, c      string // issue ids: a and b get accepted, c stays open
	otherIssueID string
}

func newAcceptWorld(t *testing.T) *acceptWorld {
	t.Helper()
	ctx := context.Background()
	w := &acceptWorld{env: testenv.New(t), now: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)}
	w.st = store.New(w.env.Store.Client(), w.env.Store.TableName(), store.WithClock(func() time.Time { return w.now }))
	w.env.Store, w.env.Deps.Store = w.st, w.st
	w.env.Deps.Now = func() time.Time { return w.now }
	w.h, w.settings = issues.New(w.env.Deps), notifications.New(w.env.Deps)
	w.acme, w.other = w.env.Company(t, "Acme"), w.env.Company(t, "Other")
	w.owner = w.env.User(t, w.acme, testenv.UserSpec{Email: "sec@acme.test"})
	for _, c := range []*testenv.Company{w.acme, w.other} {
		p, err := w.st.Catalog.CreateProject(ctx, schema.Project{CompanyID: c.ID, Name: "Web"})
		if err != nil {
			t.Fatal(err)
		}
		var batch []findings.Issue
		for n, u := range []string{"CR", "HI", "ME"} {
			batch = append(batch, findings.Issue{ProjectID: p.ID, ProjectName: p.Name, Branch: "main", CWE: 89, FilePath: fmt.Sprintf("db%d.go", n),
				Urgency: u, Status: "open", Title: "SQL injection", CreatedAt: "2026-01-01T00:00:00Z"})
		}
		if _, err := bulkload.CreateIssues(ctx, w.st, c.ID, batch); err != nil {
			t.Fatal(err)
		}
		listed, err := w.st.Lists.ListIssues(ctx, c.ID, issuelists.IssueFilter{}, storepage.Request{Limit: 10})
		if err != nil || len(listed.Items) != 3 {
			t.Fatalf("issues of %s: %d (%v)", c.Name, len(listed.Items), err)
		}
		ids := map[string]string{}
		for _, i := range listed.Items {
			ids[i.FilePath] = i.ID
		}
		if c == w.acme {
			w.a, w.b, w.c = ids["db0.go"], ids["db1.go"], ids["db2.go"]
		} else {
			w.otherIssueID = ids["db0.go"]
		}
	}
	return w
}

func (w *acceptWorld) do(t *testing.T, u testenv.User, method, path, body string) *testenv.Response {
	t.Helper()
	h := w.h
	if strings.HasPrefix(path, "/sla-settings") {
		h = w.settings
	}
	return testenv.Do(t, h, method, path, body, testenv.Key(u)...)
}

func (w *acceptWorld) issue(t *testing.T, id string) findings.Issue {
	t.Helper()
	i, err := w.st.Lists.GetIssue(context.Background(), w.acme.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// An acceptance takes an end and an owner, shows them, is listed by its
// end, and when the end comes the issue reopens through the issue write
// path: history, the SLA clock restarted, the event, exact counts; a
// second run changes nothing.
func TestRiskAcceptanceEndsAndReopens(t *testing.T) {
	w := newAcceptWorld(t)
	ctx := context.Background()
	end := w.now.AddDate(0, 0, 10)
	res := w.do(t, w.acme.Admin, "PATCH", "/issue/"+w.a, fmt.Sprintf(
		`{"status":"accepted_risk","reason":"vendor fix due in March","expires_at":%q,"owner":%d}`, end.Format(time.RFC3339), w.owner.ID))
	if res.Status != http.StatusOK {
		t.Fatalf("accept: %d %s", res.Status, res.Body)
	}
	var one struct {
		Issue struct {
			Status         string
			RiskAcceptance *struct {
				ExpiresAt  string  `json:"expires_at"`
				Owner      *string `json:"owner"`
				AcceptedBy *string `json:"accepted_by"`
				AcceptedAt string  `json:"accepted_at"`
			} `json:"risk_acceptance"`
			SLAStartedAt *string `json:"sla_started_at"`
		}
	}
	res.Decode(t, &one)
	ra := one.Issue.RiskAcceptance
	if one.Issue.Status != "accepted_risk" || ra == nil || ra.ExpiresAt != stamp(end) || ra.Owner == nil || *ra.Owner != fmt.Sprint(w.owner.ID) ||
		ra.AcceptedBy == nil || *ra.AcceptedBy != fmt.Sprint(w.acme.Admin.ID) || ra.AcceptedAt != stamp(w.now) || one.Issue.SLAStartedAt != nil {
		t.Fatalf("accepted issue: %s", res.Body)
	}

	// The admin's default period (audited with the SLA settings) applies
	// to a bulk acceptance without an end; the owner is the caller.
	if res := w.do(t, w.acme.Admin, "PUT", "/sla-settings", `{"risk_acceptance_days":30}`); res.Status != http.StatusOK ||
		res.JSON(t)["sla_settings"].(map[string]any)["risk_acceptance_days"] != float64(30) {
		t.Fatalf("settings: %d %s", res.Status, res.Body)
	}
	auditPage, err := w.st.Tenancy.ListAudit(ctx, w.acme.ID, tenancy.AuditFilter{Action: "sla_settings.update"}, storepage.Request{Limit: 5})
	audit := auditPage.Items
	if err != nil || len(audit) != 1 || fmt.Sprint(audit[0].Changes["risk_acceptance_days"]) != fmt.Sprint(ledger.Change{Before: 90, After: 30}) {
		t.Fatalf("audit %+v (%v)", audit, err)
	}
	res = w.do(t, w.acme.Admin, "POST", "/issues/triage", `{"filters":{"file_path_exact":"db1.go"},"status":"accepted_risk","reason":"test code"}`)
	if res.Status != http.StatusOK || res.JSON(t)["changed"] != float64(1) {
		t.Fatalf("bulk accept: %d %s", res.Status, res.Body)
	}
	if b := w.issue(t, w.b); b.ExpiresAt != stamp(w.now.AddDate(0, 0, 30)) || b.Owner != w.acme.Admin.ID || b.AcceptedBy != w.acme.Admin.ID {
		t.Fatalf("bulk accepted terms: %+v", b.Terms)
	}
	// A retry changes nothing: the end stays.
	w.now = w.now.Add(time.Hour)
	res = w.do(t, w.acme.Admin, "POST", "/issues/triage", `{"filters":{"file_path_exact":"db1.go"},"status":"accepted_risk","reason":"test code"}`)
	if res.Status != http.StatusOK || res.JSON(t)["changed"] != float64(0) {
		t.Fatalf("bulk retry: %d %s", res.Status, res.Body)
	}

	// The filter: accepted risks ending before a date, soonest first.
	list := func(u testenv.User, q string) (ids []string, total float64) {
		t.Helper()
		res := w.do(t, u, "GET", "/issues?"+q, "")
		if res.Status != http.StatusOK {
			t.Fatalf("list %s: %d %s", q, res.Status, res.Body)
		}
		var page struct {
			Total  float64 `json:"total_issues"`
			Issues []struct{ ID string }
		}
		res.Decode(t, &page)
		for _, i := range page.Issues {
			ids = append(ids, i.ID)
		}
		return ids, page.Total
	}
	before := func(d time.Time) string { return "accepted_until_before=" + url.QueryEscape(d.Format(time.RFC3339)) }
	if ids, total := list(w.acme.Admin, before(end)); total != 0 || len(ids) != 0 {
		t.Fatalf("before the first end: %v %v", ids, total)
	}
	if ids, total := list(w.acme.Admin, before(end.Add(time.Second))); total != 1 || len(ids) != 1 || ids[0] != w.a {
		t.Fatalf("just after the first end: %v %v", ids, total)
	}
	if ids, total := list(w.acme.Admin, before(w.now.AddDate(1, 0, 0))+"&status=accepted_risk"); total != 2 || len(ids) != 2 || ids[0] != w.a || ids[1] != w.b {
		t.Fatalf("both: %v %v", ids, total)
	}
	if ids, total := list(w.acme.Admin, before(w.now.AddDate(1, 0, 0))+"&page_size=1&page=2"); total != 2 || len(ids) != 1 || ids[0] != w.b {
		t.Fatalf("page 2: %v %v", ids, total)
	}
	if ids, total := list(w.acme.Admin, before(w.now.AddDate(1, 0, 0))+"&urgency=CR"); total != 1 || ids[0] != w.a {
		t.Fatalf("with urgency: %v %v", ids, total)
	}
	if ids, total := list(w.other.Admin, before(w.now.AddDate(1, 0, 0))); total != 0 || len(ids) != 0 {
		t.Fatalf("another company sees %v %v", ids, total)
	}
	testenv.Recount(t, w.st, w.acme.ID)

	// The end comes: nothing a second before, then a reopens, once.
	w.now = end.Add(-time.Second)
	if n, err := w.st.Triage.ExpireAcceptances(ctx, w.acme.ID); err != nil || n != 0 {
		t.Fatalf("before the end: %d (%v)", n, err)
	}
	openBefore := openCount(t, w)
	w.now = end
	if n, err := w.st.Triage.ExpireAcceptances(ctx, w.acme.ID); err != nil || n != 1 {
		t.Fatalf("at the end: %d (%v)", n, err)
	}
	for range 2 {
		if n, err := w.st.Triage.ExpireAcceptances(ctx, w.acme.ID); err != nil || n != 0 {
			t.Fatalf("re-run: %d (%v)", n, err)
		}
	}
	a := w.issue(t, w.a)
	if a.Status != "open" || a.Reason != triage.AcceptanceExpired || a.SLAStartedAt != stamp(end) || a.Terms != (schema.Terms{}) {
		t.Fatalf("reopened: %+v", a)
	}
	if start, err := a.SLAStart(); err != nil || !start.Equal(end) {
		t.Fatalf("SLA start %v (%v)", start, err)
	}
	if b := w.issue(t, w.b); b.Status != "accepted_risk" {
		t.Fatalf("b ended too: %s", b.Status)
	}
	if got := openCount(t, w); got != openBefore+1 {
		t.Fatalf("open %d, was %d", got, openBefore)
	}
	hist, err := w.st.Lists.IssueHistory(ctx, w.acme.ID, w.a)
	if err != nil || len(hist) != 2 || hist[1].From != "accepted_risk" || hist[1].To != "open" || hist[1].Reason != "risk acceptance expired" || hist[1].At != stamp(end) {
		t.Fatalf("history %+v (%v)", hist, err)
	}
	data, ok := testenv.OutboxEvent(t, w.st, w.acme.ID, fmt.Sprintf("risk_acceptance_expired-%s-v%d", a.ID, a.Version))
	if !ok || data["issue_id"] != a.ID || data["expires_at"] != stamp(end) || data["owner"] != float64(w.owner.ID) ||
		data["accepted_by"] != float64(w.acme.Admin.ID) || data["reopened_at"] != stamp(end) || data["urgency"] != "CR" {
		t.Fatalf("event %v %v", ok, data)
	}
	if _, ok := testenv.OutboxEvent(t, w.st, w.acme.ID, fmt.Sprintf("issue_status_changed-%s-v%d", a.ID, a.Version)); !ok {
		t.Fatal("no issue_status_changed event")
	}
	res = w.do(t, w.acme.Admin, "GET", "/issue/"+w.a, "")
	if res.Status != http.StatusOK || res.JSON(t)["issue"].(map[string]any)["sla_started_at"] != stamp(end) {
		t.Fatalf("issue view: %s", res.Body)
	}
	testenv.Recount(t, w.st, w.acme.ID)
	testenv.Recount(t, w.st, w.other.ID)
}

func openCount(t *testing.T, w *acceptWorld) int64 {
	t.Helper()
	open, err := w.st.Lists.ListIssues(context.Background(), w.acme.ID, issuelists.IssueFilter{Status: "open"}, storepage.Request{})
	if err != nil {
		t.Fatal(err)
	}
	return open.Count()
}

// Bad terms are 400 naming the member and change nothing; another
// company's user is refused like a missing one.
func TestRiskAcceptanceRejectsBadTerms(t *testing.T) {
	w := newAcceptWorld(t)
	in := func(d time.Duration) string { return w.now.Add(d).Format(time.RFC3339) }
	// User ids count per company: this one's id is past Acme's users.
	w.env.User(t, w.other, testenv.UserSpec{Email: "b@other.test"})
	w.env.User(t, w.other, testenv.UserSpec{Email: "d@other.test"})
	stranger := w.env.User(t, w.other, testenv.UserSpec{Email: "c@other.test"})
	inactive := w.env.User(t, w.acme, testenv.UserSpec{Email: "gone@acme.test", Inactive: true})
	if stranger.ID <= inactive.ID {
		t.Fatalf("stranger %d is an id of Acme's (up to %d)", stranger.ID, inactive.ID)
	}
	cases := []struct {
		method, path, body, want string
	}{
		{"PATCH", "/issue/" + w.c, `{"status":"accepted_risk"}`, "reason is required"},
		{"PATCH", "/issue/" + w.c, `{"status":"accepted_risk","reason":"  "}`, "reason is required"},
		{"PATCH", "/issue/" + w.c, fmt.Sprintf(`{"status":"accepted_risk","reason":"r","expires_at":%q}`, in(-time.Minute)), "expires_at must be in the future"},
		{"PATCH", "/issue/" + w.c, fmt.Sprintf(`{"status":"accepted_risk","reason":"r","expires_at":%q}`, in(0)), "expires_at must be in the future"},
		{"PATCH", "/issue/" + w.c, fmt.Sprintf(`{"status":"accepted_risk","reason":"r","expires_at":%q}`, in(365*24*time.Hour+time.Second)), "expires_at must be at most 365 days"},
		{"PATCH", "/issue/" + w.c, `{"status":"accepted_risk","reason":"r","expires_at":"next week"}`, "expires_at must be an RFC 3339"},
		{"PATCH", "/issue/" + w.c, fmt.Sprintf(`{"status":"accepted_risk","reason":"r","owner":%d}`, stranger.ID), fmt.Sprintf("owner: no active user %d in the company", stranger.ID)},
		{"PATCH", "/issue/" + w.c, fmt.Sprintf(`{"status":"accepted_risk","reason":"r","owner":%d}`, inactive.ID), fmt.Sprintf("owner: no active user %d in the company", inactive.ID)},
		{"PATCH", "/issue/" + w.c, `{"status":"accepted_risk","reason":"r","owner":987654}`, "owner: no active user 987654 in the company"},
		{"PATCH", "/issue/" + w.c, `{"status":"accepted_risk","reason":"r","owner":"me"}`, "owner must be a user id"},
		{"PATCH", "/issue/" + w.c, fmt.Sprintf(`{"status":"false_positive","reason":"r","expires_at":%q}`, in(time.Hour)), "expires_at and owner apply only with status accepted_risk"},
		{"PATCH", "/issue/" + w.c, `{"reason":"r","owner":1}`, "expires_at and owner apply only with status accepted_risk"},
		{"POST", "/issues/triage", fmt.Sprintf(`{"filters":{"urgency":"ME"},"status":"accepted_risk","reason":"r","expires_at":%q}`, in(-time.Hour)), "expires_at must be in the future"},
		{"POST", "/issues/triage", `{"filters":{"urgency":"ME"},"status":"accepted_risk"}`, "reason is required"},
		{"GET", "/issues?accepted_until_before=soon", "", "accepted_until_before must be an RFC 3339"},
		{"GET", "/issues?status=open&accepted_until_before=" + url.QueryEscape(in(time.Hour)), "", "status must be accepted_risk or absent"},
		{"PUT", "/sla-settings", `{"risk_acceptance_days":366}`, "risk_acceptance_days must be an integer from 1 to 365"},
		{"PUT", "/sla-settings", `{"risk_acceptance_days":0}`, "risk_acceptance_days must be an integer from 1 to 365"},
	}
	for _, c := range cases {
		res := w.do(t, w.acme.Admin, c.method, c.path, c.body)
		if res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), c.want) {
			t.Errorf("%s %s %s: %d %s, want 400 %q", c.method, c.path, c.body, res.Status, res.Body, c.want)
		}
	}
	if i := w.issue(t, w.c); i.Status != "open" || i.Version != 1 || i.Terms != (schema.Terms{}) {
		t.Fatalf("issue changed: %+v", i)
	}
	if s, _, err := w.st.Catalog.SLASettings(context.Background(), w.acme.ID); err != nil || s.AcceptanceDays != 90 {
		t.Fatalf("settings changed: %+v (%v)", s, err)
	}
	// Another company's issue is a missing one.
	if res := w.do(t, w.acme.Admin, "PATCH", "/issue/"+w.otherIssueID, `{"status":"accepted_risk","reason":"r"}`); res.Status != http.StatusNotFound {
		t.Fatalf("other company's issue: %d %s", res.Status, res.Body)
	}
	// The limit itself is accepted.
	if res := w.do(t, w.acme.Admin, "PATCH", "/issue/"+w.c, fmt.Sprintf(`{"status":"accepted_risk","reason":"r","expires_at":%q}`, in(365*24*time.Hour))); res.Status != http.StatusOK {
		t.Fatalf("a year ahead: %d %s", res.Status, res.Body)
	}
	testenv.Recount(t, w.st, w.acme.ID)
}

type historyAnswer struct {
	History []struct {
		At string `json:"at"`
		By struct {
			UserID int64 `json:"user_id"`
		} `json:"by"`
		From      string `json:"from"`
		To        string `json:"to"`
		Reason    string `json:"reason"`
		ExpiresAt string `json:"expires_at"`
	} `json:"history"`
}

func (w *acceptWorld) history(t *testing.T, id string) historyAnswer {
	t.Helper()
	res := w.do(t, w.acme.Admin, "GET", "/issue/"+id+"/history", "")
	if res.Status != http.StatusOK {
		t.Fatalf("history of %s: %d %s", id, res.Status, res.Body)
	}
	var h historyAnswer
	res.Decode(t, &h)
	return h
}

// Moving an accepted risk's end (PATCH or bulk triage) writes a history
// entry beside its audit entry, through the issue write path: from and to
// accepted_risk, with the reason and the new end, and no
// issue_status_changed event (the status stays). A retry writes nothing
// more, and the counters stay exact.
func TestRiskAcceptanceExtensionWritesHistory(t *testing.T) {
	w := newAcceptWorld(t)
	ctx := context.Background()
	accept := func(id, reason string, end time.Time) {
		t.Helper()
		res := w.do(t, w.acme.Admin, "PATCH", "/issue/"+id, fmt.Sprintf(`{"status":"accepted_risk","reason":%q,"expires_at":%q}`, reason, stamp(end)))
		if res.Status != http.StatusOK {
			t.Fatalf("accept %s until %s: %d %s", id, stamp(end), res.Status, res.Body)
		}
	}
	first := w.now.AddDate(0, 0, 10)
	accept(w.a, "vendor fix due in March", first)
	if h := w.history(t, w.a).History; len(h) != 1 || h[0].From != "open" || h[0].To != "accepted_risk" || h[0].ExpiresAt != stamp(first) {
		t.Fatalf("history after accepting: %+v", h)
	}
	openBefore := openCount(t, w)

	w.now = w.now.Add(time.Hour)
	later := w.now.AddDate(0, 0, 40)
	for range 2 { // the second is a retry: no more history
		accept(w.a, "vendor fix slipped to April", later)
	}
	h := w.history(t, w.a).History
	if len(h) != 2 {
		t.Fatalf("history after extending: %+v", h)
	}
	if e := h[1]; e.From != "accepted_risk" || e.To != "accepted_risk" || e.Reason != "vendor fix slipped to April" ||
		e.ExpiresAt != stamp(later) || e.At != stamp(w.now) || e.By.UserID != w.acme.Admin.ID {
		t.Fatalf("extension entry %+v", e)
	}
	a := w.issue(t, w.a)
	if a.Status != "accepted_risk" || a.ExpiresAt != stamp(later) {
		t.Fatalf("extended issue %+v", a)
	}
	if _, ok := testenv.OutboxEvent(t, w.st, w.acme.ID, fmt.Sprintf("issue_status_changed-%s-v%d", a.ID, a.Version)); ok {
		t.Fatal("an extension announced a status change")
	}
	auditPage, err := w.st.Tenancy.ListAudit(ctx, w.acme.ID, tenancy.AuditFilter{Action: "issue.update"}, storepage.Request{Limit: 10})
	audit := auditPage.Items
	extended := slices.ContainsFunc(audit, func(e tenancy.AuditRecord) bool {
		return fmt.Sprint(e.Changes["expires_at"]) == fmt.Sprint(ledger.Change{Before: stamp(first), After: stamp(later)})
	})
	if err != nil || len(audit) != 2 || !extended {
		t.Fatalf("audit %+v (%v), want the acceptance and its extension", audit, err)
	}

	// A bulk triage moving the end writes the entry too.
	res := w.do(t, w.acme.Admin, "POST", "/issues/triage", `{"filters":{"file_path_exact":"db1.go"},"status":"accepted_risk","reason":"test code"}`)
	if res.Status != http.StatusOK || res.JSON(t)["changed"] != float64(1) {
		t.Fatalf("bulk accept: %d %s", res.Status, res.Body)
	}
	res = w.do(t, w.acme.Admin, "POST", "/issues/triage", fmt.Sprintf(
		`{"filters":{"file_path_exact":"db1.go"},"status":"accepted_risk","reason":"test code","expires_at":%q}`, stamp(later)))
	if res.Status != http.StatusOK || res.JSON(t)["changed"] != float64(1) {
		t.Fatalf("bulk extension: %d %s", res.Status, res.Body)
	}
	if h := w.history(t, w.b).History; len(h) != 2 || h[1].From != "accepted_risk" || h[1].To != "accepted_risk" || h[1].ExpiresAt != stamp(later) {
		t.Fatalf("history after the bulk extension: %+v", h)
	}
	if got := openCount(t, w); got != openBefore-1 {
		t.Fatalf("open %d, want %d (b accepted, nothing else moved)", got, openBefore-1)
	}
	testenv.Recount(t, w.st, w.acme.ID)
}

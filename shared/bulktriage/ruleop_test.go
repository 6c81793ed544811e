package bulktriage_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/functions/policies"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/bulktriage"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	storesca "github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/triage"
)

// The semgrep rule below changes every open issue of both projects of a
// world of n issues in Web (and 300 in Lib): more than store.MaxRuleApply
// from n = 1,001 on.
const semgrepRule = `{"matcher":{"tool":"semgrep"},"action":{"status":"false_positive","reason":"generated code"}}`

// openIssues is how many issues of a world of n are open.
func openIssues(n int) int { return n - (n+6)/7 + 300 - (300+6)/7 }

// createRule stores a rule through the API and answers its id.
func (w *world) createRule(t *testing.T, ph http.Handler, body string) string {
	t.Helper()
	res := testenv.Do(t, ph, "POST", "/triage-rules", body, testenv.Key(w.company.Admin)...)
	if res.Status != http.StatusCreated {
		t.Fatalf("POST /triage-rules: %d %s", res.Status, res.Body)
	}
	var a struct {
		Rule struct {
			ID string `json:"id"`
		} `json:"rule"`
	}
	res.Decode(t, &a)
	return a.Rule.ID
}

// applyOp posts an application that must answer 202 with a queued
// operation naming the rule.
func (w *world) applyOp(t *testing.T, ph http.Handler, ruleID string, header ...string) opJSON {
	t.Helper()
	res := testenv.Do(t, ph, "POST", "/triage-rules/"+ruleID+"/apply", "", append(testenv.Key(w.company.Admin), header...)...)
	if res.Status != http.StatusAccepted {
		t.Fatalf("apply: %d %s", res.Status, res.Body)
	}
	var a struct {
		DryRun    bool   `json:"dry_run"`
		Operation opJSON `json:"operation"`
	}
	res.Decode(t, &a)
	if a.DryRun || a.Operation.State != triage.OpQueued || a.Operation.RuleID != ruleID || a.Operation.Status != "false_positive" {
		t.Fatalf("apply answered %s", res.Body)
	}
	return a.Operation
}

// scaFindings stores k open SCA findings of semgrep's in project Web.
func (w *world) scaFindings(t *testing.T, k int) []string {
	t.Helper()
	ctx := context.Background()
	var web int64
	err := w.env.Store.Lists.EachIssue(ctx, w.company.ID, func(i findings.Issue) error {
		if i.ProjectName == "Web" {
			web = i.ProjectID
		}
		return nil
	})
	if err != nil || web == 0 {
		t.Fatalf("project Web: %d %v", web, err)
	}
	sc, err := w.env.Store.Scans.CreateScan(ctx, scans.Scan{ID: uuid.NewString(), CompanyID: w.company.ID, ProjectID: web, Branch: "main", Engine: "osv",
		Tool: "semgrep", Status: scans.ScanProcessing, CreatedAt: "2025-05-01T10:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	var found []storesca.Issue
	var ids []string
	for n := range k {
		adv := fmt.Sprintf("GHSA-0000-0000-%04d", n)
		i := storesca.Issue{ID: findings.IssueID(w.company.ID, web, "main", "semgrep", adv), ProjectID: web, Branch: "main", Tool: "semgrep",
			IDs: []string{adv}, Classification: adv, Severity: "HIGH", Package: storesca.Package{Name: fmt.Sprintf("pkg%d", n), Version: "1.0.0", Ecosystem: "npm"},
			Location: storesca.Location{Path: "package-lock.json"}}
		found, ids = append(found, i), append(ids, i.ID)
	}
	if err := w.env.Store.SCA.PutScanSCAIssues(ctx, w.company.ID, sc, found); err != nil {
		t.Fatal(err)
	}
	return ids
}

func (w *world) audits(t *testing.T, action string) []tenancy.AuditRecord {
	t.Helper()
	entriesPage, err := w.env.Store.Tenancy.ListAudit(context.Background(), w.company.ID, tenancy.AuditFilter{Action: action}, page.Request{Limit: 50})
	entries := entriesPage.Items
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// A rule's application past store.MaxRuleApply runs as an operation that
// the poll route of bulk triage follows: its SAST issues and SCA findings
// change exactly as the dry run counted, by the rule (history names it and
// its applier), one audit entry; a worker killed midway resumes to the same
// counts, a redelivery and a retry with the same Idempotency-Key change
// nothing, and applying again changes 0 at once.
func TestRuleApplicationRunsAsOperation(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	const n = 1_100
	w := newWorld(t, env, "Acme", n)
	ph := policies.New(env.Deps)
	sca := w.scaFindings(t, 3)
	rule := w.createRule(t, ph, semgrepRule)
	want := int64(openIssues(n) + len(sca))

	dry := testenv.Do(t, ph, "POST", "/triage-rules/"+rule+"/apply?dry_run=true", "", testenv.Key(w.company.Admin)...)
	if body := dry.JSON(t); dry.Status != http.StatusOK || body["changed"] != float64(want) {
		t.Fatalf("dry run: %d %s, want changed %d", dry.Status, dry.Body, want)
	}
	op := w.applyOp(t, ph, rule, "Idempotency-Key", "apply-1")
	if c := w.statusCounts(t); c["Web/open"] != n-(n+6)/7 {
		t.Fatalf("the request changed issues: %v", c)
	}
	job := bulktriage.Job{CompanyID: w.company.ID, ID: op.ID}
	killed := &bulktriage.Worker{Store: bulktriage.StoreOf(failingTransactions(t, env, 8)), Log: quiet(), PageSize: 500}
	if err := killed.Run(context.Background(), job); err == nil {
		t.Fatal("the killed worker did not stop")
	}
	worker := &bulktriage.Worker{Store: bulktriage.StoreOf(env.Store), Log: quiet(), PageSize: 500}
	if err := worker.Run(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	done := w.get(t, op.ID)
	if done.State != triage.OpDone || done.Matched != want || done.Processed != want || done.Changed != want || done.RuleID != rule {
		t.Fatalf("done %+v, want matched = changed = %d", done, want)
	}
	if c := w.statusCounts(t); c["Web/open"] != 0 || c["Lib/open"] != 0 || c["Web/false_positive"] != n || c["Lib/false_positive"] != 300 {
		t.Errorf("statuses after: %v", c)
	}
	for _, id := range sca {
		if i, err := env.Store.SCA.GetSCAIssue(context.Background(), w.company.ID, id); err != nil || i.Status != "false_positive" || i.TriageRuleID != rule || i.Reason != "generated code" {
			t.Errorf("SCA finding %s: %+v %v", id, i, err)
		}
	}
	testenv.Recount(t, env.Store, w.company.ID)
	one := uuid.NewSHA1(uuid.NameSpaceOID, []byte("Acme-Web-1")).String()
	hist, err := env.Store.Lists.IssueHistory(context.Background(), w.company.ID, one)
	if err != nil || len(hist) == 0 {
		t.Fatalf("history of %s: %+v %v", one, hist, err)
	}
	if last := hist[len(hist)-1]; last.To != "false_positive" || last.By.RuleID != rule || last.By.UserID != w.company.Admin.ID {
		t.Errorf("history of %s ends %+v", one, last)
	}
	if a := w.audits(t, "triage_rule.apply"); len(a) != 1 || a[0].TargetID != rule || a[0].Changes["operation_id"].After != op.ID {
		t.Errorf("audit entries %+v, want one naming the operation", a)
	}
	if a := w.audits(t, "triage_rule.apply_sca"); len(a) != 0 {
		t.Errorf("an operation's SCA part audited apart: %+v", a)
	}

	// A redelivery, a retry with the key: nothing more.
	if err := worker.Run(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	res := testenv.Do(t, ph, "POST", "/triage-rules/"+rule+"/apply", "", append(testenv.Key(w.company.Admin), "Idempotency-Key", "apply-1")...)
	if res.Status != http.StatusAccepted || res.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry with the key: %d %v %s", res.Status, res.Header, res.Body)
	}
	if late := w.get(t, op.ID); fmt.Sprint(late) != fmt.Sprint(done) {
		t.Errorf("a redelivery moved %+v to %+v", done, late)
	}
	if a := w.audits(t, "triage_rule.apply"); len(a) != 1 {
		t.Errorf("after the retries: %d audit entries", len(a))
	}
	// Applying again: nothing left to change, answered at once.
	again := testenv.Do(t, ph, "POST", "/triage-rules/"+rule+"/apply", "", testenv.Key(w.company.Admin)...)
	if body := again.JSON(t); again.Status != http.StatusOK || body["changed"] != float64(0) {
		t.Errorf("applying again: %d %s", again.Status, again.Body)
	}
	testenv.Recount(t, env.Store, w.company.ID)
}

// An operation whose rule is disabled or deleted before it runs ends
// failed with that reason and changes nothing, one disabled midway keeps
// what it changed, counted; an inactive rule is refused at request time;
// another company's rule and operation answer like missing ones.
func TestRuleApplicationOfAGoneRule(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 1_001)
	ph := policies.New(env.Deps)
	worker := &bulktriage.Worker{Store: bulktriage.StoreOf(env.Store), Log: quiet(), PageSize: 500}
	before := w.statusCounts(t)
	for _, c := range []struct{ method, body, reason string }{
		{"PATCH", `{"enabled":false}`, "the triage rule was disabled"},
		{"DELETE", "", "the triage rule was deleted"},
	} {
		rule := w.createRule(t, ph, semgrepRule)
		op := w.applyOp(t, ph, rule)
		if res := testenv.Do(t, ph, c.method, "/triage-rules/"+rule, c.body, testenv.Key(w.company.Admin)...); res.Status != http.StatusOK {
			t.Fatalf("%s rule: %d %s", c.method, res.Status, res.Body)
		}
		if err := worker.Run(context.Background(), bulktriage.Job{CompanyID: w.company.ID, ID: op.ID}); err != nil {
			t.Fatal(err)
		}
		if got := w.get(t, op.ID); got.State != triage.OpFailed || got.Error != c.reason || got.Changed != 0 {
			t.Errorf("%s: %+v", c.method, got)
		}
		if c.method == "PATCH" {
			res := testenv.Do(t, ph, "POST", "/triage-rules/"+rule+"/apply", "", testenv.Key(w.company.Admin)...)
			if res.Status != http.StatusBadRequest {
				t.Errorf("applying a disabled rule: %d %s", res.Status, res.Body)
			}
		}
	}
	if after := w.statusCounts(t); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("statuses %v, were %v", after, before)
	}
	testenv.Recount(t, env.Store, w.company.ID)

	other := &world{env: env, h: w.h, company: env.Company(t, "Other")}
	rule := w.createRule(t, ph, semgrepRule)
	op := w.applyOp(t, ph, rule)
	for _, path := range []string{"/triage-rules/" + rule + "/apply", "/triage-rules/" + rule + "/apply?dry_run=true"} {
		theirs := testenv.Do(t, ph, "POST", path, "", testenv.Key(other.company.Admin)...)
		unknown := testenv.Do(t, ph, "POST", "/triage-rules/"+uuid.NewString()+"/apply", "", testenv.Key(other.company.Admin)...)
		if theirs.Status != http.StatusNotFound || string(theirs.Body) != string(unknown.Body) {
			t.Errorf("%s by another company: %d %s; unknown: %d %s", path, theirs.Status, theirs.Body, unknown.Status, unknown.Body)
		}
	}
	theirs := testenv.Do(t, w.h, "GET", "/issues/triage/"+op.ID, "", testenv.Key(other.company.Admin)...)
	unknown := testenv.Do(t, w.h, "GET", "/issues/triage/"+uuid.NewString(), "", testenv.Key(other.company.Admin)...)
	if theirs.Status != http.StatusNotFound || string(theirs.Body) != string(unknown.Body) {
		t.Errorf("another company's operation: %d %s; unknown: %d %s", theirs.Status, theirs.Body, unknown.Status, unknown.Body)
	}

	// Disabled midway (a first worker stopped while applying): the next
	// delivery ends it failed, what changed stays changed and counted. The
	// first worker meets a refusal DynamoDB asks to retry on its way (as
	// under load) and still stops at its killed transaction, the fourth
	// step's (collecting is four): the op then counts exactly what its
	// three steps changed.
	midway := w.createRule(t, ph, semgrepRule)
	op = w.applyOp(t, ph, midway)
	job := bulktriage.Job{CompanyID: w.company.ID, ID: op.ID}
	if err := (&bulktriage.Worker{Store: bulktriage.StoreOf(killedAt(t, env, 8, 3)), Log: quiet(), PageSize: 500}).Run(context.Background(), job); !errors.Is(err, errKilled) {
		t.Fatalf("the killed worker stopped with %v", err)
	}
	changedBy := func(c map[string]int) int {
		return c["Web/false_positive"] + c["Lib/false_positive"] - before["Web/false_positive"] - before["Lib/false_positive"]
	}
	killed := w.get(t, op.ID)
	if n := changedBy(w.statusCounts(t)); killed.State != triage.OpApplying || killed.Changed == 0 || int(killed.Changed) != n || killed.Processed < killed.Changed {
		t.Fatalf("killed while applying: %+v, %d issues changed", killed, n)
	}
	if res := testenv.Do(t, ph, "PATCH", "/triage-rules/"+midway, `{"enabled":false}`, testenv.Key(w.company.Admin)...); res.Status != http.StatusOK {
		t.Fatalf("disable: %d %s", res.Status, res.Body)
	}
	if err := worker.Run(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	got := w.get(t, op.ID)
	c := w.statusCounts(t)
	if got.State != triage.OpFailed || got.Error != "the triage rule was disabled" || got.Changed != killed.Changed || int(got.Changed) != changedBy(c) {
		t.Errorf("disabled midway: %+v, %d changed (statuses %v, were %v)", got, changedBy(c), c, before)
	}
	testenv.Recount(t, env.Store, w.company.ID)
}

// A bulk triage past the ceiling to accepted_risk keeps the end and owner
// it was asked for: every issue it changes ends at that time, owned by
// that user, accepted by the author when the worker ran (the store's
// clock).
func TestBulkTriageKeepsAcceptanceTerms(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	st := store.New(env.Store.Client(), env.Store.TableName(), store.WithClock(func() time.Time { return now }))
	env.Store, env.Deps.Store = st, st
	env.Deps.Now = func() time.Time { return now }
	const n = 1_001
	w := newWorld(t, env, "Acme", n)
	w.h = issues.New(env.Deps)
	owner := env.User(t, w.company, testenv.UserSpec{Email: "sec@acme.test"})
	end := now.AddDate(0, 0, 30).Format(time.RFC3339)
	body := fmt.Sprintf(`{"filters":{"project":"Web"},"status":"accepted_risk","reason":"vendor fix due","expires_at":%q,"owner":%d}`, end, owner.ID)
	op := w.start(t, body)
	if op.ExpiresAt != end || op.Owner != owner.ID {
		t.Fatalf("operation %+v, want the terms shown", op)
	}
	now = now.Add(time.Hour) // the worker runs later
	worker := &bulktriage.Worker{Store: bulktriage.StoreOf(st), Log: quiet(), PageSize: 500}
	if err := worker.Run(context.Background(), bulktriage.Job{CompanyID: w.company.ID, ID: op.ID}); err != nil {
		t.Fatal(err)
	}
	if done := w.get(t, op.ID); done.State != triage.OpDone || done.Matched != n || done.Changed != n {
		t.Fatalf("done %+v", done)
	}
	accepted := 0
	err := st.Lists.EachIssue(context.Background(), w.company.ID, func(i findings.Issue) error {
		if i.ProjectName != "Web" {
			return nil
		}
		accepted++
		if i.Status != "accepted_risk" || i.ExpiresAt != end || i.Owner != owner.ID || i.AcceptedBy != w.company.Admin.ID || i.AcceptedAt != now.Format(time.RFC3339) {
			t.Errorf("issue %s: %s until %q owner %d by %d at %q", i.ID, i.Status, i.ExpiresAt, i.Owner, i.AcceptedBy, i.AcceptedAt)
		}
		return nil
	})
	if err != nil || accepted != n {
		t.Fatalf("%d Web issues (%v)", accepted, err)
	}
	if a := w.triageAudits(t); len(a) != 1 || a[0].Changes["expires_at"].After != end {
		t.Errorf("audit %+v", a)
	}

	// An end that has passed when the worker runs: the operation ends
	// failed at once, saying so, and changes nothing.
	soon := now.Add(time.Hour).Format(time.RFC3339)
	late := w.start(t, fmt.Sprintf(`{"filters":{"project":"Web"},"status":"accepted_risk","reason":"shorter","expires_at":%q}`, soon))
	now = now.Add(2 * time.Hour)
	if err := worker.Run(context.Background(), bulktriage.Job{CompanyID: w.company.ID, ID: late.ID}); err != nil {
		t.Fatalf("a change no retry fixes was retried: %v", err)
	}
	if failed := w.get(t, late.ID); failed.State != triage.OpFailed || failed.Changed != 0 || !strings.Contains(failed.Error, "expires_at") {
		t.Fatalf("late end: %+v", failed)
	}
	testenv.Recount(t, st, w.company.ID)
}

// More SCA findings than store.MaxRuleApply (and few issues) run as an
// operation too: the findings' id pages follow the issues', and every
// finding ends with the rule's status, counted exactly.
func TestRuleApplicationOfManySCAFindings(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	w := newWorld(t, env, "Acme", 10)
	ph := policies.New(env.Deps)
	sca := w.scaFindings(t, 1_001)
	rule := w.createRule(t, ph, semgrepRule)
	want := int64(openIssues(10) + len(sca))
	op := w.applyOp(t, ph, rule)
	worker := &bulktriage.Worker{Store: bulktriage.StoreOf(env.Store), Log: quiet(), PageSize: 400}
	if err := worker.Run(context.Background(), bulktriage.Job{CompanyID: w.company.ID, ID: op.ID}); err != nil {
		t.Fatal(err)
	}
	if done := w.get(t, op.ID); done.State != triage.OpDone || done.Matched != want || done.Changed != want {
		t.Fatalf("done %+v, want matched = changed = %d", done, want)
	}
	open := 0
	for _, id := range sca {
		i, err := env.Store.SCA.GetSCAIssue(context.Background(), w.company.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if i.Status != "false_positive" || i.TriageRuleID != rule {
			open++
		}
	}
	if c := w.statusCounts(t); open != 0 || c["Web/open"] != 0 || c["Lib/open"] != 0 {
		t.Errorf("%d SCA findings unchanged; statuses %v", open, c)
	}
	testenv.Recount(t, env.Store, w.company.ID)
}

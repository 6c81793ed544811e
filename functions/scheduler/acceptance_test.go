package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/triage"
)

// The SLA job ends acceptances: the critical issue, long past its first
// deadline (breached before it was accepted), reopens with its SLA clock
// restarted, so it is not overdue at once; seven days later it breaches
// again, under its new clock, once.
func TestSLAJobEndsAcceptancesAndRestartsTheClock(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	now := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	st := store.New(env.Store.Client(), env.Store.TableName(), store.WithClock(func() time.Time { return now }))
	c := env.Company(t, "Acc")
	crit := findings.Issue{ID: "44444444-4444-4444-8444-444444444444", ProjectID: 3, ProjectName: "billing", Branch: "main", CWE: 89,
		FilePath: "db.go", Urgency: "CR", Status: "open", Title: "SQL injection", CreatedAt: "2026-01-01T00:00:00Z"}
	if _, err := bulkload.CreateIssues(ctx, st, c.ID, []findings.Issue{crit}); err != nil {
		t.Fatal(err)
	}
	if n, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(st), now); err != nil || n != 1 {
		t.Fatalf("first breach: %d (%v)", n, err)
	}
	accepted := "accepted_risk"
	end := now.AddDate(0, 0, 14)
	if _, err := st.Triage.UpdateIssue(ctx, c.ID, crit.ID, triage.IssueUpdate{Status: &accepted, Terms: schema.Terms{ExpiresAt: end.Format(time.RFC3339)}},
		findings.Actor{UserID: c.Admin.ID}); err != nil {
		t.Fatal(err)
	}
	now = end.Add(-time.Minute)
	if n, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(st), now); err != nil || n != 0 {
		t.Fatalf("before the end: %d (%v)", n, err)
	}
	now = end.Add(30 * time.Minute) // the hourly run after the end
	if n, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(st), now); err != nil || n != 1 {
		t.Fatalf("the end: %d handled (%v)", n, err)
	}
	i, err := st.Lists.GetIssue(ctx, c.ID, crit.ID)
	if err != nil || i.Status != "open" || i.SLAStartedAt != now.Format(time.RFC3339) {
		t.Fatalf("reopened %+v (%v)", i, err)
	}
	if _, ok := testenv.OutboxEvent(t, st, c.ID, "risk_acceptance_expired-"+crit.ID+"-v3"); !ok {
		t.Fatal("no risk_acceptance_expired event")
	}
	restart := now
	for _, day := range []int{0, 6} {
		now = restart.AddDate(0, 0, day)
		if n, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(st), now); err != nil || n != 0 {
			t.Fatalf("day %d of the new clock: %d (%v)", day, n, err)
		}
	}
	for run := range 2 {
		now = restart.AddDate(0, 0, 7).Add(time.Duration(run) * time.Hour)
		if n, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(st), now); err != nil || n != 1-run {
			t.Fatalf("day 7 run %d: %d (%v)", run, n, err)
		}
	}
	data, ok := testenv.OutboxEvent(t, st, c.ID, "sla_breach-"+crit.ID+"-"+restart.Format(time.RFC3339))
	if !ok || data["due_date"] != restart.AddDate(0, 0, 7).Format(time.RFC3339) || data["first_detection_date"] != crit.CreatedAt {
		t.Fatalf("second breach %v %v", ok, data)
	}
	testenv.Recount(t, st, c.ID)
}

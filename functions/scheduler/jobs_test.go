package scheduler_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/functions/scheduler"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func outboxEvent(t *testing.T, st *store.Store, companyID int64, id string) (schema.Event, bool) {
	t.Helper()
	res, err := st.Client().GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(st.TableName()), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)}, "SK": &types.AttributeValueMemberS{Value: "EVENT#" + id},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Item == nil {
		return schema.Event{}, false
	}
	ev, ok, err := schema.DecodeEventImage(res.Item)
	if err != nil || !ok {
		t.Fatalf("outbox item %s: %v", id, err)
	}
	return ev, true
}

func TestSLABreachRaisedOncePerIssueAndWeeklyDigest(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	c := env.Company(t, "Sla")
	detected := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	issue := func(id, urgency, status string) findings.Issue {
		return findings.Issue{ID: id, ProjectID: 3, ProjectName: "billing", Branch: "main", CWE: 89, FilePath: "db.go", Line: 7,
			Urgency: urgency, Status: status, Title: "SQL injection " + urgency, CreatedAt: detected.Format(time.RFC3339)}
	}
	crit := issue("11111111-1111-4111-8111-111111111111", "CR", "open")
	if _, err := bulkload.CreateIssues(ctx, env.Store, c.ID, []findings.Issue{
		crit, issue("22222222-2222-4222-8222-222222222222", "LO", "open"),
		issue("33333333-3333-4333-8333-333333333333", "CR", "fixed"),
	}); err != nil {
		t.Fatal(err)
	}
	// Day 5: nothing due (CR has 7 days).
	if n, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(env.Store), detected.AddDate(0, 0, 5)); err != nil || n != 0 {
		t.Fatalf("day 5: %d raised (%v)", n, err)
	}
	// Day 8: the open critical issue, once, however often the job runs.
	for run := range 3 {
		n, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(env.Store), detected.AddDate(0, 0, 8))
		if err != nil || n != map[int]int{0: 1}[run] {
			t.Fatalf("day 8 run %d: %d raised (%v)", run, n, err)
		}
	}
	ev, ok := outboxEvent(t, env.Store, c.ID, "sla_breach-"+crit.ID)
	if !ok || ev.Type != "sla_breach" {
		t.Fatalf("sla_breach event %v %+v", ok, ev)
	}
	var data map[string]any
	if err := json.Unmarshal(ev.Data, &data); err != nil || data["issue_id"] != crit.ID || data["urgency"] != "CR" ||
		data["due_date"] != detected.AddDate(0, 0, 7).Format(time.RFC3339) || data["project_name"] != "billing" {
		t.Fatalf("data %s", ev.Data)
	}
	// The company's own settings apply: LO in 10 days.
	s := sla.Defaults()
	s.DaysToFix["LO"] = 10
	if err := env.Store.Catalog.PutSLASettings(ctx, c.ID, s); err != nil {
		t.Fatal(err)
	}
	if n, err := scheduler.SLAChecks(ctx, scheduler.StoreOf(env.Store), detected.AddDate(0, 0, 11)); err != nil || n != 1 {
		t.Fatalf("custom LO: %d (%v)", n, err)
	}

	now := detected.AddDate(0, 0, 11)
	if n, err := scheduler.WeeklyDigest(ctx, scheduler.StoreOf(env.Store), now); err != nil || n != 1 {
		t.Fatalf("digest: %d (%v)", n, err)
	}
	if n, _ := scheduler.WeeklyDigest(ctx, scheduler.StoreOf(env.Store), now.Add(time.Hour)); n != 0 {
		t.Fatalf("second digest in the same week: %d", n)
	}
	year, week := now.ISOWeek()
	ev, ok = outboxEvent(t, env.Store, c.ID, "weekly_digest-"+itoa(c.ID)+"-"+itoa(int64(year))+"-W"+pad(week))
	if !ok {
		t.Fatal("no digest event")
	}
	var digest struct {
		Open      int            `json:"open_issues"`
		Overdue   int            `json:"overdue"`
		ByUrgency map[string]int `json:"open_by_urgency"`
	}
	if err := json.Unmarshal(ev.Data, &digest); err != nil || digest.Open != 2 || digest.Overdue != 2 || digest.ByUrgency["CR"] != 1 || digest.ByUrgency["LO"] != 1 {
		t.Fatalf("digest %s", ev.Data)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func pad(n int) string {
	if n < 10 {
		return "0" + itoa(int64(n))
	}
	return itoa(int64(n))
}

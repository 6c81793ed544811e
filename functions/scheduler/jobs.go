package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Scheduled jobs (EventBridge schedules in AWS, the dev server's timer
// locally). Neither reads every issue: the SLA check reads, per company
// and urgency, the pending range of the due index (store/findings/due.go) past the
// deadline, that is the issues that became due since its last run; the
// digest counts open issues from the group counters and the overdue and
// due-soon ones with COUNT queries of the due index. Both first finish
// the backfills of a table written before this version (the due index
// keys, the projects' lower-cased URL; at most backfillBudget per run;
// they resume at the next run).

// backfillBudget bounds the backfill's share of one run (the scheduler's
// Lambda has 300 seconds).
const backfillBudget = 2 * time.Minute

// backfill runs the backfills of a table written before this version (the
// issues' index keys, then the projects' lower-cased URL), both within one
// backfillBudget.
func backfill(ctx context.Context, st Store) error {
	until := time.Now().Add(backfillBudget)
	if _, _, err := st.Lists.BackfillDueIndex(ctx, until); err != nil {
		return err
	}
	_, _, err := st.Catalog.BackfillProjectRepoKeys(ctx, until)
	return err
}

// SLAChecks reopens every company's accepted risks whose end has come
// (their SLA clock restarts: store.ExpireAcceptances), then raises
// sla_breach once per open issue past its due date, and returns how many
// issues it reopened and breaches it raised.
func SLAChecks(ctx context.Context, st Store, now time.Time) (int, error) {
	if err := backfill(ctx, st); err != nil {
		return 0, err
	}
	ids, err := st.Tenancy.CompanyIDs(ctx)
	if err != nil {
		return 0, err
	}
	raised := 0
	var errs []error
	for _, id := range ids {
		reopened, err := st.Triage.ExpireAcceptances(ctx, id)
		raised += reopened
		if err != nil {
			errs = append(errs, fmt.Errorf("company %d: %w", id, err))
		}
		n, err := slaBreaches(ctx, st, id, now)
		raised += n
		if err != nil {
			errs = append(errs, fmt.Errorf("company %d: %w", id, err))
		}
	}
	return raised, errors.Join(errs...)
}

// slaBreaches raises the breaches of a company's pending issues past due
// and moves each to breached once its event is recorded (raised now, or
// before: a reopened issue breaches once).
func slaBreaches(ctx context.Context, st Store, companyID int64, now time.Time) (int, error) {
	settings, _, err := st.Catalog.SLASettings(ctx, companyID)
	if err != nil {
		return 0, err
	}
	raised := 0
	for _, u := range sla.Urgencies {
		overdueBy, _ := sla.Window(u, settings, now)
		err := st.Lists.EachPendingDue(ctx, companyID, u, overdueBy, func(i findings.Issue) error {
			start, err := i.SLAStart()
			first, ok := firstDetection(i)
			if err != nil || !ok || i.Status != "open" {
				return nil // closed since the index was read
			}
			status, due := sla.Status(start, i.Urgency, settings, now)
			if status != sla.Overdue {
				return nil // its urgency changed since: its own range holds it
			}
			code, _ := sla.Urgency(i.Urgency)
			data, err := json.Marshal(map[string]any{
				"issue_id": i.ID, "project_id": i.ProjectID, "project_name": i.ProjectName, "title": i.Title,
				"urgency": code, "first_detection_date": first.UTC().Format(time.RFC3339), "due_date": due.UTC().Format(time.RFC3339),
			})
			if err != nil {
				return err
			}
			isNew, err := st.Ledger.RecordEventOnce(ctx, schema.Event{
				ID: breachID(i), CompanyID: companyID, Type: "sla_breach", CreatedAt: now, Data: data,
			})
			if err != nil {
				return err
			}
			if isNew {
				raised++
			}
			if err := st.Findings.MarkBreached(ctx, i); err != nil && !errors.Is(err, ddb.ErrConflict) {
				return err
			}
			return nil
		})
		if err != nil {
			return raised, err
		}
	}
	return raised, nil
}

// breachID names an issue's breach of one SLA clock: once per issue,
// and once more per restart of its clock (an ended risk acceptance).
func breachID(i findings.Issue) string {
	if i.SLAStartedAt == "" {
		return "sla_breach-" + i.ID
	}
	return "sla_breach-" + i.ID + "-" + i.SLAStartedAt
}

// firstDetection is when the issue was first found: its creation.
func firstDetection(i findings.Issue) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, i.CreatedAt)
	return t, err == nil
}

// WeeklyDigest records, once per company and ISO week, the digest of the
// company's open issues and their SLA standing.
func WeeklyDigest(ctx context.Context, st Store, now time.Time) (int, error) {
	if err := backfill(ctx, st); err != nil {
		return 0, err
	}
	ids, err := st.Tenancy.CompanyIDs(ctx)
	if err != nil {
		return 0, err
	}
	year, week := now.UTC().ISOWeek()
	start := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -((int(now.UTC().Weekday())+6)%7)-7)
	recorded := 0
	var errs []error
	for _, id := range ids {
		settings, _, err := st.Catalog.SLASettings(ctx, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		open, overdue, dueSoon, byUrgency, err := digestCounts(ctx, st, id, settings, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if open == 0 {
			continue
		}
		data, err := json.Marshal(map[string]any{
			"week_start": start.Format(time.DateOnly), "week_end": start.AddDate(0, 0, 6).Format(time.DateOnly),
			"open_issues": open, "open_by_urgency": byUrgency, "overdue": overdue, "due_soon": dueSoon,
		})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		isNew, err := st.Ledger.RecordEventOnce(ctx, schema.Event{
			ID: fmt.Sprintf("weekly_digest-%d-%d-W%02d", id, year, week), CompanyID: id, Type: "weekly_digest", CreatedAt: now, Data: data,
		})
		if err != nil {
			errs = append(errs, err)
		}
		if isNew {
			recorded++
		}
	}
	return recorded, errors.Join(errs...)
}

// digestCounts are a company's open issues, in all and by urgency code
// (from the group counters), and how many of them are overdue and due soon
// at now (COUNT queries of the due index's ranges).
func digestCounts(ctx context.Context, st Store, companyID int64, settings sla.Settings, now time.Time) (open, overdue, dueSoon int64, byUrgency map[string]int64, err error) {
	if byUrgency, err = st.Lists.OpenByUrgency(ctx, companyID); err != nil {
		return 0, 0, 0, nil, err
	}
	for _, u := range sla.Urgencies {
		open += byUrgency[u]
		if byUrgency[u] == 0 {
			continue
		}
		overdueBy, dueSoonBy := sla.Window(u, settings, now)
		n, err := st.Lists.CountOpenDetected(ctx, companyID, u, time.Time{}, overdueBy)
		if err != nil {
			return 0, 0, 0, nil, err
		}
		m, err := st.Lists.CountOpenDetected(ctx, companyID, u, overdueBy, dueSoonBy)
		if err != nil {
			return 0, 0, 0, nil, err
		}
		overdue, dueSoon = overdue+n, dueSoon+m
	}
	return open, overdue, dueSoon, byUrgency, nil
}

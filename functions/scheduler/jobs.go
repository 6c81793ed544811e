package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store"
)

// Scheduled jobs (EventBridge schedules in AWS, the dev server's timer
// locally). Both read a company's issues through store.EachIssue, one
// query per issue partition: a company's whole issue set per run (about
// 0.5 RCU per 4 KB of issues, so some 500 RCU per 10,000 issues). An index
// of open issues by first detection (see the README) would make the SLA
// check read only the issues past due.

// SLAChecks raises sla_breach once per open issue past its due date, for
// every company, and returns how many it raised.
func SLAChecks(ctx context.Context, st *store.Store, now time.Time) (int, error) {
	ids, err := st.CompanyIDs(ctx)
	if err != nil {
		return 0, err
	}
	raised := 0
	var errs []error
	for _, id := range ids {
		n, err := slaBreaches(ctx, st, id, now)
		raised += n
		if err != nil {
			errs = append(errs, fmt.Errorf("company %d: %w", id, err))
		}
	}
	return raised, errors.Join(errs...)
}

func slaBreaches(ctx context.Context, st *store.Store, companyID int64, now time.Time) (int, error) {
	settings, _, err := st.SLASettings(ctx, companyID)
	if err != nil {
		return 0, err
	}
	raised := 0
	err = st.EachIssue(ctx, companyID, func(i store.Issue) error {
		first, ok := firstDetection(i)
		if !ok || i.Status != "open" {
			return nil
		}
		status, due := sla.Status(first, i.Urgency, settings, now)
		if status != sla.Overdue {
			return nil
		}
		code, _ := sla.Urgency(i.Urgency)
		data, err := json.Marshal(map[string]any{
			"issue_id": i.ID, "project_id": i.ProjectID, "project_name": i.ProjectName, "title": i.Title,
			"urgency": code, "first_detection_date": first.UTC().Format(time.RFC3339), "due_date": due.UTC().Format(time.RFC3339),
		})
		if err != nil {
			return err
		}
		isNew, err := st.RecordEventOnce(ctx, store.Event{
			ID: "sla_breach-" + i.ID, CompanyID: companyID, Type: "sla_breach", CreatedAt: now, Data: data,
		})
		if isNew {
			raised++
		}
		return err
	})
	return raised, err
}

// firstDetection is when the issue was first found: its creation.
func firstDetection(i store.Issue) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, i.CreatedAt)
	return t, err == nil
}

// WeeklyDigest records, once per company and ISO week, the digest of the
// company's open issues and their SLA standing.
func WeeklyDigest(ctx context.Context, st *store.Store, now time.Time) (int, error) {
	ids, err := st.CompanyIDs(ctx)
	if err != nil {
		return 0, err
	}
	year, week := now.UTC().ISOWeek()
	start := now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -((int(now.UTC().Weekday())+6)%7)-7)
	recorded := 0
	var errs []error
	for _, id := range ids {
		settings, _, err := st.SLASettings(ctx, id)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		open, overdue, dueSoon := 0, 0, 0
		byUrgency := map[string]int{"CR": 0, "HI": 0, "ME": 0, "LO": 0}
		err = st.EachIssue(ctx, id, func(i store.Issue) error {
			if i.Status != "open" {
				return nil
			}
			open++
			if code, ok := sla.Urgency(i.Urgency); ok {
				byUrgency[code]++
			}
			if first, ok := firstDetection(i); ok {
				switch st, _ := sla.Status(first, i.Urgency, settings, now); st {
				case sla.Overdue:
					overdue++
				case sla.DueSoon:
					dueSoon++
				}
			}
			return nil
		})
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
		isNew, err := st.RecordEventOnce(ctx, store.Event{
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

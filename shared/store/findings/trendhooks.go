package findings

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/sla"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/trendmath"
)

// The issue write path moves the trend records of the issues' company and
// project (see shared/store/trends) where it moves the group counters:
// commitIssues adds them to each of its transactions, bulkCreate to its
// scan journal (schema.ScanJournalTrendSK), so they are exact under
// retries and concurrency as the counters are.

// fixSettings reads the company's SLA settings (consistently: a fix is
// judged against the deadline in force) when one of changes enters fixed,
// nil otherwise.
func (x *Findings) fixSettings(ctx context.Context, companyID int64, changes []IssueChange) (*sla.Settings, error) {
	for _, c := range changes {
		if c.After != nil && c.After.Status == "fixed" && (c.Before == nil || c.Before.Status != "fixed") {
			st, _, err := catalog.ReadSLASettings(ctx, companyID, x.t.GetItemConsistent)
			return &st, err
		}
	}
	return nil, nil
}

// trendMoves are what changes written at at add to the trend records.
func trendMoves(changes []IssueChange, at string, st *sla.Settings) ([]trends.Move, error) {
	when, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return nil, err
	}
	out := make([]trends.Change, 0, len(changes))
	for _, c := range changes {
		tc := trends.Change{ProjectID: c.issue().ProjectID, Change: trendmath.Change{At: when}}
		if c.Before != nil {
			tc.From = trendmath.State{Status: c.Before.Status, Urgency: c.Before.Urgency}
		}
		if a := c.After; a != nil {
			tc.To = trendmath.State{Status: a.Status, Urgency: a.Urgency}
			if a.Status == "fixed" && st != nil {
				if tc.Detected, err = time.Parse(time.RFC3339, a.CreatedAt); err != nil {
					return nil, fmt.Errorf("issue %s created_at %q: %w", a.ID, a.CreatedAt, ddb.ErrInvalid)
				}
				start, err := a.SLAStart()
				if err != nil {
					return nil, err
				}
				tc.Due = sla.Due(start, a.Urgency, *st)
			}
		}
		out = append(out, tc)
	}
	return trends.Moves(out)
}

// txTrend are the trend moves of one transaction's changes.
func (x *Findings) txTrend(companyID int64, chunk []IssueChange, at string, st *sla.Settings) ([]types.TransactWriteItem, error) {
	moves, err := trendMoves(chunk, at, st)
	if err != nil {
		return nil, err
	}
	return x.d.Trends.TxMoves(companyID, moves)
}

// trendMovesAt are the trend moves of changes written at at, a fix among
// them judged against the company's SLA settings.
func (x *Findings) trendMovesAt(ctx context.Context, companyID int64, changes []IssueChange, at string) ([]trends.Move, error) {
	st, err := x.fixSettings(ctx, companyID, changes)
	if err != nil {
		return nil, err
	}
	return trendMoves(changes, at, st)
}

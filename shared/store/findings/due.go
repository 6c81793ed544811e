package findings

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/acceptances"
	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// The due index (tabledef.Due): every open SAST issue carries
//
//	DuePK C#<company>#DUE#<urgency>#<state>   DueSK <first detection, UTC, ns>#<id>
//
// where state is P (pending: the SLA job has not handled its breach) or B
// (breached: the job raised it). The write path (commitIssues, bulkCreate,
// the bench loader) sets the keys from the issue's status and urgency
// (setDue); only the SLA job moves an issue from P to B (MarkBreached).
// The SLA start is the first detection, which nothing changes, so the keys
// do not depend on a company's SLA settings: a settings change rewrites no
// issue, it only moves the range the job reads.
//
// The SLA start is the first detection until an expired risk acceptance
// restarts the clock (Issue.SLAStartedAt): the keys then sort by that.
//
// Rules, applied by setDue on every write:
//   - an accepted_risk issue with an end is in its company's expiry
//     partition instead (see shared/store/acceptances), by its end;
//   - any other issue that is not open has no keys (fixed, triaged: it
//     leaves);
//   - a new issue, an issue that becomes open (a reopen, a triage back to
//     open) and an open issue whose urgency changes are pending: the next
//     run reads them if their new deadline has passed, however old their
//     first detection. A breach is raised once per issue and SLA clock
//     (RecordEventOnce's marker), so a reopened issue whose breach was
//     raised before is moved to B without a second event, and one that
//     never breached gets its event;
//   - any other write of an open issue keeps its state.
//
// So the job reads, per company and urgency, the pending range up to now
// minus the days to fix: the issues that became due since its last run
// (and those that re-entered), never the ones it handled.
const (
	duePending  = "P"
	dueBreached = "B"
)

func duePK(companyID int64, urgency, state string) string {
	return fmt.Sprintf("%s#DUE#%s#%s", schema.CompanyPK(companyID), urgency, state)
}

// dueTime is the fixed-width UTC form of a first detection in DueSK, so
// that keys sort by time; nanoseconds keep a range bound exact.
const dueTime = "2006-01-02T15:04:05.000000000Z"

// dueUpTo is the greatest DueSK bound for first detections at or before
// t: every key of t ("<t>#<id>") sorts below it, every later time above.
func dueUpTo(t time.Time) string { return t.UTC().Format(dueTime) + "$" }

// setDue sets the issue's due index keys for its state after a write;
// before is the stored issue (nil for a new one).
func (i *Issue) setDue(before *Issue) error {
	i.DuePK, i.DueSK = "", ""
	if i.Status == "accepted_risk" && i.ExpiresAt != "" {
		end, err := i.Expires()
		if err != nil {
			return fmt.Errorf("issue risk_expires_at %q: %w", i.ExpiresAt, ddb.ErrInvalid)
		}
		i.DuePK, i.DueSK = acceptances.PK(i.CompanyID), acceptances.SK(end, i.ID)
		return nil
	}
	if i.Status != "open" {
		return nil
	}
	t, err := i.SLAStart()
	if err != nil {
		return err
	}
	state := duePending
	if before != nil && before.Status == "open" && before.Urgency == i.Urgency && before.DuePK == duePK(i.CompanyID, i.Urgency, dueBreached) {
		state = dueBreached
	}
	i.DuePK, i.DueSK = duePK(i.CompanyID, i.Urgency, state), t.UTC().Format(dueTime)+"#"+i.ID
	return nil
}

// duePage is how many index keys one read of EachPendingDue takes (one
// BatchGetItem of the issues).
const duePage = 100

// EachPendingDue calls fn with the company's open issues of the urgency
// that are pending (see above) and were first detected at or before by, in
// first-detection order. It reads the index keys of that range, then the
// issues by key: its cost grows with the issues it returns. An issue
// written since the index was updated (the index is eventually
// consistent) comes as it is now, maybe no longer open or pending.
func (x *Findings) EachPendingDue(ctx context.Context, companyID int64, urgency string, by time.Time, fn func(Issue) error) error {
	kc := expression.Key(tabledef.Due.PK).Equal(expression.Value(duePK(companyID, urgency, duePending))).
		And(expression.Key(tabledef.Due.SK).LessThanEqual(expression.Value(dueUpTo(by))))
	var start map[string]types.AttributeValue
	for {
		items, next, err := x.t.QueryRaw(ctx, tabledef.Due.Name, kc, nil, true, duePage, start)
		if err != nil {
			return err
		}
		keys := make([]ddb.Key, len(items))
		for n, it := range items {
			if err := attributevalue.UnmarshalMap(it, &keys[n]); err != nil {
				return err
			}
		}
		got, err := x.t.ReadBatch(ctx, keys, false)
		if err != nil {
			return err
		}
		for _, k := range keys {
			av, ok := got[k]
			if !ok {
				continue // deleted since
			}
			var i Issue
			if err := attributevalue.UnmarshalMap(av, &i); err != nil {
				return err
			}
			if err := fn(i); err != nil {
				return err
			}
		}
		if next == nil {
			return nil
		}
		start = next
	}
}

// MarkBreached moves an open issue (as EachPendingDue returned it) from
// pending to breached, once its breach is recorded. It is conditional on
// the issue still being pending under the same keys, and it leaves the
// issue's version alone, so it never fails a writer: a writer that read
// the issue before the move writes keys computed from what it read (a
// pending issue stays pending), and the next run finds the breach already
// recorded and moves it again. ErrConflict when the issue is no longer
// pending there (its writer decided its keys).
func (x *Findings) MarkBreached(ctx context.Context, i Issue) error {
	pending := duePK(i.CompanyID, i.Urgency, duePending)
	cond := expression.Name(tabledef.Due.PK).Equal(expression.Value(pending)).
		And(expression.Name(tabledef.Due.SK).Equal(expression.Value(i.DueSK)))
	upd := expression.Set(expression.Name(tabledef.Due.PK), expression.Value(duePK(i.CompanyID, i.Urgency, dueBreached)))
	err := x.t.Update(ctx, i.Key, upd, &cond, nil)
	if errors.Is(err, ddb.ErrNotFound) {
		return ddb.ErrConflict
	}
	return err
}

// CountOpenDetected counts the company's open issues of the urgency first
// detected after after (the zero time: from the first) and at or before
// upTo, pending or breached: COUNT queries of the due index, whose cost
// grows with the issues counted (some 30 index keys per 0.5 RCU), not
// with the company's issues.
func (x *Findings) CountOpenDetected(ctx context.Context, companyID int64, urgency string, after, upTo time.Time) (int64, error) {
	var n int64
	for _, state := range []string{duePending, dueBreached} {
		sk := expression.Key(tabledef.Due.SK).LessThanEqual(expression.Value(dueUpTo(upTo)))
		if !after.IsZero() {
			sk = expression.Key(tabledef.Due.SK).Between(expression.Value(dueUpTo(after)), expression.Value(dueUpTo(upTo)))
		}
		c, err := x.t.Count(ctx, tabledef.Due.Name, expression.Key(tabledef.Due.PK).Equal(expression.Value(duePK(companyID, urgency, state))).And(sk))
		if err != nil {
			return 0, err
		}
		n += c
	}
	return n, nil
}

// OpenByUrgency counts the company's open SAST issues per urgency code
// from its group counters (the company scope's CWE groups): its cost grows
// with the company's distinct CWEs, not its issues.
func (x *Findings) OpenByUrgency(ctx context.Context, companyID int64) (map[string]int64, error) {
	groups, err := x.ScopeGroups(ctx, companyID, Scope{}, ByCWE)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, u := range Urgencies {
		out[u] = 0
		for _, g := range groups {
			out[u] += g.Cells.Total(u, "open")
		}
	}
	return out, nil
}

// CheckDueKeys reports an issue whose due index keys break the rules above
// (for recounts): an open issue is in its urgency's pending or breached
// partition under its SLA start, an accepted risk with an end in the
// expiry partition under it, any other has no keys.
func (i Issue) CheckDueKeys() error {
	want := i
	if err := want.setDue(nil); err != nil { // pending, or no keys
		return err
	}
	if i.Status == "open" && i.DuePK == duePK(i.CompanyID, i.Urgency, dueBreached) {
		want.DuePK = i.DuePK
	}
	if want.DuePK != i.DuePK || want.DueSK != i.DueSK {
		return fmt.Errorf("issue %s (%s, %s): due keys %q %q, want %q %q", i.ID, i.Status, i.Urgency, i.DuePK, i.DueSK, want.DuePK, want.DueSK)
	}
	return nil
}

package findings

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// The due index (tabledef.Due): every open SAST issue carries
//
//	DuePK C#<company>#DUE#<urgency>#<state>   DueSK <first detection, UTC, ns>#P<project>#<id>
//
// where state is P (pending: the SLA job has not handled its breach) or B
// (breached: the job raised it). The write path (commitIssues, bulkCreate,
// the bench loader) sets the keys from the issue's status and urgency
// (setDue); only the SLA job moves an issue from P to B (MarkBreached).
// The SLA start is the first detection, which nothing changes, so the keys
// do not depend on a company's SLA settings: a settings change rewrites no
// issue, it only moves the range the job reads.
//
// The project in DueSK lets a count of a range keep one project's keys
// (a filter on the key, see issuelists' pastDue) without reading the
// issues.
//
// The SLA start is the first detection until an expired risk acceptance
// restarts the clock (Issue.SLAStartedAt): the keys then sort by that.
//
// Rules, applied by setDue on every write:
//   - an accepted_risk issue with an end is in its company's expiry
//     partition instead (see shared/store/triage, acceptance.go), by its end;
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
	DuePending  = "P"
	DueBreached = "B"
)

// dueTime is the fixed-width UTC form of a first detection in DueSK, so
// that keys sort by time; nanoseconds keep a range bound exact.
const dueTime = "2006-01-02T15:04:05.000000000Z"

// DueUpTo is the greatest DueSK bound for first detections at or before
// t: every key of t ("<t>#P<project>#<id>") sorts below it, every later
// time above.
func DueUpTo(t time.Time) string { return t.UTC().Format(dueTime) + "$" }

// SetDue sets the issue's due index keys for its state after a write;
// before is the stored issue (nil for a new one).
func (i *Issue) SetDue(before *Issue) error {
	i.DuePK, i.DueSK = "", ""
	if i.Status == "accepted_risk" && i.ExpiresAt != "" {
		end, err := i.Expires()
		if err != nil {
			return fmt.Errorf("issue risk_expires_at %q: %w", i.ExpiresAt, ddb.ErrInvalid)
		}
		i.DuePK, i.DueSK = schema.AcceptedDuePK(i.CompanyID), schema.AcceptedDueSK(end, i.ID)
		return nil
	}
	if i.Status != "open" {
		return nil
	}
	t, err := i.SLAStart()
	if err != nil {
		return err
	}
	state := DuePending
	if before != nil && before.Status == "open" && before.Urgency == i.Urgency && before.DuePK == schema.DuePK(i.CompanyID, i.Urgency, DueBreached) {
		state = DueBreached
	}
	i.DuePK, i.DueSK = schema.DuePK(i.CompanyID, i.Urgency, state), t.UTC().Format(dueTime)+schema.DueProject(i.ProjectID)+i.ID
	return nil
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
	pending := schema.DuePK(i.CompanyID, i.Urgency, DuePending)
	cond := expression.Name(tabledef.Due.PK).Equal(expression.Value(pending)).
		And(expression.Name(tabledef.Due.SK).Equal(expression.Value(i.DueSK)))
	upd := expression.Set(expression.Name(tabledef.Due.PK), expression.Value(schema.DuePK(i.CompanyID, i.Urgency, DueBreached)))
	err := x.t.Update(ctx, i.Key, upd, &cond, nil)
	if errors.Is(err, ddb.ErrNotFound) {
		return ddb.ErrConflict
	}
	return err
}

// CheckDueKeys reports an issue whose due index keys break the rules above
// (for recounts): an open issue is in its urgency's pending or breached
// partition under its SLA start, an accepted risk with an end in the
// expiry partition under it, any other has no keys.
func (i Issue) CheckDueKeys() error {
	want := i
	if err := want.SetDue(nil); err != nil { // pending, or no keys
		return err
	}
	if i.Status == "open" && i.DuePK == schema.DuePK(i.CompanyID, i.Urgency, DueBreached) {
		want.DuePK = i.DuePK
	}
	if want.DuePK != i.DuePK || want.DueSK != i.DueSK {
		return fmt.Errorf("issue %s (%s, %s): due keys %q %q, want %q %q", i.ID, i.Status, i.Urgency, i.DuePK, i.DueSK, want.DuePK, want.DueSK)
	}
	return nil
}

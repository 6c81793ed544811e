package triage

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Risk acceptance (docs/findings.md, "Risk acceptance"): an accepted_risk
// issue carries its terms (an end and an owner, schema.Terms), which
// the write path settles on every change (settleTerms), and the due index
// (tabledef.Due) holds it, while it is accepted, in its company's expiry
// partition sorted by that end (setDue). The scheduled job
// (ExpireAcceptances) and the issue list's accepted_until_before filter
// read that partition's range up to a time (EachEndingBefore): by key,
// never the company's issues.

// AcceptanceExpired is the history reason, and the issue's, of an
// acceptance that ended.
const AcceptanceExpired = "risk acceptance expired"

// ExpireAcceptances reopens the company's accepted risks whose end has
// come, through the issue write path: status open, history and reason
// AcceptanceExpired, the SLA clock restarted now, a
// risk_acceptance_expired event beside issue_status_changed. It reads the
// company's expiry partition up to now (by key), then each issue
// consistently, and changes only those still accepted and ended, so a
// second run changes nothing. It returns how many it reopened.
func (x *Triage) ExpireAcceptances(ctx context.Context, companyID int64) (int, error) {
	now := x.t.Clock()
	reopened := 0
	err := x.EachEndingBefore(ctx, companyID, now.Truncate(time.Second).Add(time.Second), func(keys []ddb.Key) error {
		ids := make([]string, 0, len(keys))
		for _, k := range keys {
			if id, ok := schema.IssueKeyID(k); ok {
				ids = append(ids, id)
			}
		}
		done, err := x.update(ctx, companyID, ids, func(got map[string]findings.Issue, _ int) (edit, error) {
			at := x.t.Stamp()
			var changes []findings.IssueChange
			for _, i := range got {
				c, ok, err := expiry(companyID, i, now, at)
				if err != nil {
					return edit{}, err
				}
				if ok {
					changes = append(changes, c)
				}
			}
			return edit{changes: changes}, nil
		})
		reopened += len(done)
		return err
	})
	return reopened, err
}

// expiry is the change that reopens i when its acceptance has ended at
// now; false when it has not (or i is no longer accepted).
func expiry(companyID int64, i findings.Issue, now time.Time, at string) (findings.IssueChange, bool, error) {
	if i.Status != "accepted_risk" || i.ExpiresAt == "" {
		return findings.IssueChange{}, false, nil
	}
	end, err := i.Expires()
	if err != nil || now.Before(end) {
		return findings.IssueChange{}, false, nil
	}
	after := i
	after.Status, after.Reason, after.SLAStartedAt = "open", AcceptanceExpired, at
	data, err := json.Marshal(map[string]any{
		"issue_id": i.ID, "project_id": i.ProjectID, "project_name": i.ProjectName, "branch": i.Branch,
		"title": i.Title, "urgency": i.Urgency, "expires_at": i.ExpiresAt, "owner": userOrNull(i.Owner),
		"accepted_by": userOrNull(i.AcceptedBy), "accepted_at": i.AcceptedAt, "reopened_at": at,
	})
	if err != nil {
		return findings.IssueChange{}, false, err
	}
	// The id names the version the reopen writes: a retried transaction
	// records the same event, a later acceptance's end a new one.
	e := schema.Event{ID: fmt.Sprintf("risk_acceptance_expired-%s-v%d", i.ID, i.Version+1), CompanyID: companyID,
		Type: "risk_acceptance_expired", Data: data}
	return findings.IssueChange{Before: &i, After: &after, Reason: AcceptanceExpired, Events: []schema.Event{e}}, true, nil
}

func userOrNull(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// duePage is how many keys one read of the expiry partition takes (one
// BatchGetItem of the issues).
const duePage = 100

// EachEndingBefore calls fn with the keys of the company's accepted risks
// whose end is before t, soonest end first, a page at a time. The index is
// eventually consistent: a key may name an issue changed since.
func (x *Triage) EachEndingBefore(ctx context.Context, companyID int64, t time.Time, fn func([]ddb.Key) error) error {
	kc := expression.Key(tabledef.Due.PK).Equal(expression.Value(schema.AcceptedDuePK(companyID))).
		And(expression.Key(tabledef.Due.SK).LessThan(expression.Value(schema.AcceptedDueBefore(t))))
	return x.t.EachKeys(ctx, tabledef.Due.Name, kc, duePage, fn)
}

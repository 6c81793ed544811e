// Package acceptances holds the terms of an accepted risk
// (docs/findings.md, "Risk acceptance"): an accepted_risk issue carries an end and an owner, and the due index
// (tabledef.Due) holds it, while it is accepted, in its company's expiry
// partition sorted by that end. The scheduled job and the issue list's
// accepted_until_before filter read that partition's range up to a time:
// by key, never the company's issues. The issue write path (the store's
// commitIssues) sets the terms and the keys; this package reads them.
package acceptances

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// MaxDays bounds an acceptance's end (the default period is the company's,
// with its SLA settings: sla.Settings.AcceptanceDays).
const MaxDays = 365

// Terms are an accepted risk's: until when, whose it is, who accepted it
// and when. An issue carries them (embedded, so its item holds them as
// attributes of its own, none while zero) while its status is
// accepted_risk.
type Terms struct {
	ExpiresAt  string `dynamodbav:"risk_expires_at,omitempty"`
	Owner      int64  `dynamodbav:"risk_owner,omitempty"` // a user of the company; 0: none (a change by the system)
	AcceptedBy int64  `dynamodbav:"risk_accepted_by,omitempty"`
	AcceptedAt string `dynamodbav:"risk_accepted_at,omitempty"`
}

// Expires is the end of the terms.
func (t Terms) Expires() (time.Time, error) { return time.Parse(time.RFC3339, t.ExpiresAt) }

// CheckEnd reports an end that is not after now or is more than MaxDays
// after it.
func CheckEnd(end, now time.Time) error {
	switch {
	case !end.After(now):
		return fmt.Errorf("expires_at must be in the future")
	case end.After(now.AddDate(0, 0, MaxDays)):
		return fmt.Errorf("expires_at must be at most %d days ahead", MaxDays)
	}
	return nil
}

// PK is the due index partition of a company's accepted risks.
func PK(companyID int64) string { return schema.AcceptedDuePK(companyID) }

// SK is the due index sort key of an issue accepted until end.
func SK(end time.Time, issueID string) string { return schema.AcceptedDueSK(end, issueID) }

// Acceptances reads the expiry partitions of the store's table.
type Acceptances struct{ t *ddb.Table }

// New returns the acceptances of table t.
func New(t *ddb.Table) *Acceptances { return &Acceptances{t: t} }

// page is how many keys one read takes (one BatchGetItem of the issues).
const page = 100

// EachEndingBefore calls fn with the keys of the company's accepted risks
// whose end is before t, soonest end first, a page at a time. The index is
// eventually consistent: a key may name an issue changed since.
func (a *Acceptances) EachEndingBefore(ctx context.Context, companyID int64, t time.Time, fn func([]ddb.Key) error) error {
	kc := expression.Key(tabledef.Due.PK).Equal(expression.Value(PK(companyID))).
		And(expression.Key(tabledef.Due.SK).LessThan(expression.Value(schema.AcceptedDueBefore(t))))
	var start map[string]types.AttributeValue
	for {
		items, next, err := a.t.QueryRaw(ctx, tabledef.Due.Name, kc, nil, true, page, start)
		if err != nil {
			return err
		}
		keys := make([]ddb.Key, len(items))
		for n, it := range items {
			if err := attributevalue.UnmarshalMap(it, &keys[n]); err != nil {
				return err
			}
		}
		if len(keys) > 0 {
			if err := fn(keys); err != nil {
				return err
			}
		}
		if next == nil {
			return nil
		}
		start = next
	}
}

package schema

import (
	"time"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// AuditItem is an audit entry as stored: the company's log partition (its
// sort key is the time, then a random id: newest first by reading it
// backwards), with GSI1 serving the actor filter and GSI2 the action filter.
// A second copy under a partition per (actor, action) serves both filters
// at once. Both expire through the table's TTL.
type AuditItem struct {
	ddb.Key
	GSI1PK      string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK      string `dynamodbav:"GSI1SK,omitempty"`
	GSI2PK      string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK      string `dynamodbav:"GSI2SK,omitempty"`
	ID          string `dynamodbav:"id"`
	CompanyID   int64  `dynamodbav:"company_id"`
	At          string `dynamodbav:"at"`
	ActorUserID int64  `dynamodbav:"actor_user_id"`
	ActorVia    string `dynamodbav:"actor_via"`
	ActorKeyID  int64  `dynamodbav:"actor_key_id,omitempty"`
	Action      string `dynamodbav:"action"`
	TargetType  string `dynamodbav:"target_type"`
	TargetID    string `dynamodbav:"target_id"`
	Changes     string `dynamodbav:"changes"` // JSON object of Change
	ExpiresAt   int64  `dynamodbav:"expires_at"`
}

// AuditTimeLayout is fixed-width, so sort keys order by time.
const AuditTimeLayout = "2006-01-02T15:04:05.000000Z"

// AuditSK is the sort key of an audit entry (and of its index copies): the
// time, then the entry's id.
func AuditSK(at time.Time, id string) string { return at.Format(AuditTimeLayout) + "#" + id }

// AuditSKUpTo is the greatest audit sort key bound of the entries at or
// before t.
func AuditSKUpTo(t time.Time) string { return t.UTC().Format(AuditTimeLayout) + "#\U0010FFFF" }

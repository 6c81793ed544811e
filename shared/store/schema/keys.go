// Package schema is the store's item layout: every key builder and item
// type, so that no area imports another for a key.
package schema

import (
	"fmt"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// CompanyPK is the partition of everything a company owns.
func CompanyPK(companyID int64) string { return fmt.Sprintf("C#%d", companyID) }

// AuditPK is the partition of a company's audit log.
func AuditPK(companyID int64) string { return CompanyPK(companyID) + "#AUDIT" }

// AuditActorPK is the audit index partition of one actor.
func AuditActorPK(companyID int64, actor string) string {
	return AuditPK(companyID) + "#ACTOR#" + actor
}

// AuditActionPK is the audit index partition of one action.
func AuditActionPK(companyID int64, action string) string {
	return AuditPK(companyID) + "#ACTION#" + action
}

// AuditBothPK is the partition of the audit copies of one actor and action.
func AuditBothPK(companyID int64, actor, action string) string {
	return AuditPK(companyID) + "#ACTOR#" + actor + "#ACTION#" + action
}

// EventKey is an outbox event's key.
func EventKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: EventSK(id)}
}

// EventSK is an outbox event's sort key (in its company's partition).
func EventSK(id string) string { return "EVENT#" + id }

// EventOnceKey is the marker that an event was raised once
// (ledger.RecordEventOnce); it has no expiry.
func EventOnceKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "ONCE#" + id}
}

// CountKey is a company counter of a collection.
func CountKey(companyID int64, collection string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "COUNT#" + collection}
}

// OffsetKeys are the Offset index attributes a list item carries (see
// page.List.OffsetPartition).
type OffsetKeys struct {
	OffsetPK string `dynamodbav:"OffsetPK,omitempty"`
	OffsetSK string `dynamodbav:"OffsetSK,omitempty"`
}

// MaxMillis inverts creation times (unix milliseconds) so that ascending
// keys are newest first.
const MaxMillis = 9_999_999_999_999

// MarkerKey holds a small global value (for example that the demo is
// seeded).
func MarkerKey(name string) ddb.Key { return ddb.Key{PK: "MARKER", SK: name} }

// NewestFirst is a sort key part that orders by creation (unix
// milliseconds) newest first, ties by id.
func NewestFirst(createdMillis int64, id string) string {
	return fmt.Sprintf("%013d#%s", MaxMillis-createdMillis, id)
}

// ProjectSKPrefix begins the sort key of every project item of a company
// (ProjectKey): one range of the company's partition reads its projects.
const ProjectSKPrefix = "PROJECT#"

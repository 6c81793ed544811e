package schema

import (
	"fmt"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// TriageEntity marks bulk triage operation items: the ingester's stream
// filter selects new items carrying it (deployspec.TriageFilter). The
// operation's id pages carry no entity, so their inserts reach no worker.
const TriageEntity = "triage"

// TriageOpKey is a bulk triage operation's key, inside its company's
// partition: another company's id is simply not there.
func TriageOpKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "TRIAGE#" + id}
}

// TriageIDsKey is the key of the operation's n-th page of matched issue
// ids.
func TriageIDsKey(companyID int64, id string, n int) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("TRIAGE#%s#IDS#%06d", id, n)}
}

// TriageOpItem is a bulk triage operation as stored (and as its stream
// record's new image carries it). The worker first collects the ids the
// filters match into id pages (Cursor: the list's token after the last
// page collected), then applies the status page by page (Page, Pos: the
// next id to apply); every step moves the checkpoint and the counts in the
// transaction that does its work, so a step is never done or counted twice.
type TriageOpItem struct {
	ddb.Key
	Entity    string `dynamodbav:"entity"`
	ID        string `dynamodbav:"id"`
	CompanyID int64  `dynamodbav:"company_id"`
	UserID    int64  `dynamodbav:"user_id"`
	// Status and Reason are what the operation sets; RiskExpiresAt and
	// RiskOwner the accepted risk's terms the request gave (none: the
	// company's default end, the author).
	Status        string `dynamodbav:"status"`
	Reason        string `dynamodbav:"reason,omitempty"`
	RiskExpiresAt string `dynamodbav:"risk_expires_at,omitempty"`
	RiskOwner     int64  `dynamodbav:"risk_owner,omitempty"`
	// RuleID names the triage rule an application operation applies (its
	// status, reason and urgency are the rule's, read at every step); empty
	// for a bulk triage.
	RuleID string `dynamodbav:"rule_id,omitempty"`
	// Filters are the request's filters as sent (JSON object), shown back;
	// Query is what the worker reads: the filters resolved when the
	// operation was created (JSON, opaque here).
	Filters string `dynamodbav:"filters"`
	Query   string `dynamodbav:"query"`
	State   string `dynamodbav:"state"`
	// Attempt counts the worker's starts.
	Attempt   int    `dynamodbav:"attempt"`
	Cursor    string `dynamodbav:"cursor,omitempty"`
	Pages     int    `dynamodbav:"pages"`
	Page      int    `dynamodbav:"page"`
	Pos       int    `dynamodbav:"pos"`
	Matched   int64  `dynamodbav:"matched"`
	Processed int64  `dynamodbav:"processed"`
	Changed   int64  `dynamodbav:"changed"`
	Error     string `dynamodbav:"error,omitempty"`
	CreatedAt string `dynamodbav:"created_at"`
	// FinishedAt is set when the operation is done or failed.
	FinishedAt string `dynamodbav:"finished_at,omitempty"`
	ExpiresAt  int64  `dynamodbav:"expires_at"`
}

// TriageIDsItem is one page of an operation's matched issue ids, in the
// list's order.
type TriageIDsItem struct {
	ddb.Key
	IDs       []string `dynamodbav:"ids"`
	ExpiresAt int64    `dynamodbav:"expires_at"`
}

// The triage rules' keys (store/triage, rules.go): each rule in its company's
// partition under TriageRuleSKPrefix, counted as TriageRulesCount; the
// active ones also in their scope's partition (TriageRuleActivePK).
const (
	TriageRuleSKPrefix = "TRIAGERULE#"
	TriageRulesCount   = "TRIAGERULES"
)

// TriageRuleKey is a triage rule's key.
func TriageRuleKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: TriageRuleSKPrefix + id}
}

// TriageRuleActivePK is the partition of a scope's active rules (project
// 0: the company-wide ones).
func TriageRuleActivePK(companyID, projectID int64) string {
	return fmt.Sprintf("%s#TRIAGE#P%d", CompanyPK(companyID), projectID)
}

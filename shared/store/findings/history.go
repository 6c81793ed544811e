package findings

import (
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// HistoryEntry is one status change of an issue: when, who (a user, or the
// scan whose upload caused it), from, to and why, and, when it leaves the
// issue an accepted risk, until when (so an extension, from and to
// accepted_risk, says what changed). Entries are written in the same
// transaction as the change (commitIssues) and never change.
type HistoryEntry struct {
	ddb.Key `json:"-"`
	At      string `dynamodbav:"at" json:"at"`
	By      Actor  `dynamodbav:"by" json:"by"`
	From    string `dynamodbav:"from" json:"from"`
	To      string `dynamodbav:"to" json:"to"`
	Reason  string `dynamodbav:"reason,omitempty" json:"reason,omitempty"`
	// AcceptedUntil is not stored as expires_at: that is the table's TTL
	// attribute (tabledef.TTLAttribute), which would delete the entry
	// when the acceptance ends.
	AcceptedUntil string `dynamodbav:"accepted_until,omitempty" json:"expires_at,omitempty"`
}

// NewHistory is the entry of change c at time at; seq tells apart entries
// of one transaction, the version the change writes those of one issue. A
// new issue a triage rule acted on comes from open, where issues start.
func NewHistory(companyID int64, c IssueChange, at string, seq int) HistoryEntry {
	from := "open"
	if c.Before != nil {
		from = c.Before.Status
	}
	h := HistoryEntry{
		Key: ddb.Key{PK: schema.HistoryPK(companyID, c.After.ID), SK: schema.HistorySK(at, c.After.Version, seq)},
		At:  at, By: c.By, From: from, To: c.After.Status, Reason: c.Reason,
	}
	if c.After.Status == "accepted_risk" {
		h.AcceptedUntil = c.After.ExpiresAt
	}
	return h
}

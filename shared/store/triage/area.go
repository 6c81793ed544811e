// Package triage is the store's area of people's (and rules') triage of
// issues: an issue's update, a decision carried to the finding's other
// branches, a bulk triage and its operation's steps, a triage rule's
// application to existing issues, and the expiry of accepted risks. Every
// change goes through the findings' issue write path.
package triage

import (
	"github.com/acme/codescan-api/shared/store/acceptances"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/decisions"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/triageops"
	"github.com/acme/codescan-api/shared/store/triagerules"
)

// Triage changes issues as people and rules decide.
type Triage struct {
	t           *ddb.Table
	l           *ledger.Ledger
	f           *findings.Findings
	lists       *issuelists.Lists
	ops         *triageops.TriageOps
	rules       *triagerules.TriageRules
	decisions   *decisions.Decisions
	acceptances *acceptances.Acceptances
}

// New returns the area on a table, its ledger and the areas it changes
// issues through and reads.
func New(t *ddb.Table, l *ledger.Ledger, f *findings.Findings, lists *issuelists.Lists, ops *triageops.TriageOps, rules *triagerules.TriageRules,
	d *decisions.Decisions, a *acceptances.Acceptances) *Triage {
	return &Triage{t: t, l: l, f: f, lists: lists, ops: ops, rules: rules, decisions: d, acceptances: a}
}

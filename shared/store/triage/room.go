// Package triage is the store's room of triage (docs/findings.md): what
// people and rules decide about issues, in files by use:
//
//   - decide.go: a person's change of one issue (PATCH /issues/{id}) and a
//     bulk triage of what a filter matches;
//   - decisions.go: the project decisions carried to the finding's issues
//     of every other branch;
//   - rules.go: triage rules (their CRUD, and the active ones ingestion
//     reads);
//   - acceptance.go: accepted risks, which reopen as their terms end;
//   - operations.go: the records of bulk triage operations, queued to done;
//   - application.go and applypages.go: a rule applied to existing issues
//     and SCA findings at once, and an operation's pages applied a
//     transaction at a time;
//   - update.go: the read-change-commit loop every change of issues goes
//     through, over the findings' issue write path.
//
// The pure rule model (matchers, actions, their order) is
// shared/triagemodel; the stored shapes it shares with the areas that
// read them (a decision, a risk's terms) are the schema's.
package triage

import (
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/sca"
)

// Triage changes issues as people and rules decide, and keeps the rules,
// decisions, acceptances and operations they decide with.
type Triage struct {
	t     *ddb.Table
	l     *ledger.Ledger
	f     *findings.Findings
	lists *issuelists.Lists
	sca   *sca.SCA
}

// New returns the room on a table and its ledger. Its rules, decisions,
// acceptances and operations need nothing more; what changes or lists
// issues needs the areas Use gives it.
func New(t *ddb.Table, l *ledger.Ledger) *Triage { return &Triage{t: t, l: l} }

// Use gives the room the areas it changes issues through and reads. Those
// areas read the room's rules and decisions (through their ports), so the
// room is made first and then given them (store.New does both).
func (x *Triage) Use(f *findings.Findings, lists *issuelists.Lists, s *sca.SCA) {
	x.f, x.lists, x.sca = f, lists, s
}

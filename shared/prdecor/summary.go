package prdecor

import (
	"context"
	"slices"

	"github.com/acme/codescan-api/shared/gate"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// MaxListed bounds the findings a summary lists in each of its sections
// (new, fixed); the rest are counted. A comment on GitHub holds at most
// 65,536 characters.
const MaxListed = 50

// Summary is what a pull-request scan says to its reviewers.
type Summary struct {
	Scan    scans.Scan
	Project schema.Project
	// Baseline is the branch compared with (the pull request's base, or
	// the project's default branch), "" when none was.
	Baseline string
	// New are the findings the pull request adds that are still to act
	// on (open, fix in progress), urgent first; NewTotal counts them all.
	New      []findings.Issue
	NewTotal int
	// LeftOut counts the findings the base branch already has.
	LeftOut int
	// Fixed are findings of the pull request's branch that a scan of it
	// fixed; FixedTotal counts them all.
	Fixed      []findings.Issue
	FixedTotal int64
	// Blocking names, by issue id, the slugs of the company's CI blocking
	// rules each new finding triggers; the status fails when any does.
	Blocking map[string][]string
}

// Failing reports whether the company's CI blocking rules block the pull
// request.
func (s Summary) Failing() bool { return len(s.Blocking) > 0 }

// summarize reads a scan's summary: its findings compared with its
// baseline (gate.BaselineBranch: a pull request's base branch), judged
// by the company's active CI blocking rules, as the CI gate judges them.
func summarize(ctx context.Context, st Store, sc scans.Scan, proj schema.Project) (Summary, error) {
	sum := Summary{Scan: sc, Project: proj, Blocking: map[string][]string{}}
	var err error
	if sum.Baseline, err = gate.BaselineBranch(ctx, gate.Source{Baselines: st.Baselines, Scans: st.Scans}, sc, proj, nil); err != nil {
		return sum, err
	}
	var issues []findings.Issue
	if err := st.Lists.EachScanIssue(ctx, sc.CompanyID, sc.ID, func(i findings.Issue) error {
		issues = append(issues, i)
		return nil
	}); err != nil {
		return sum, err
	}
	cmp, err := gate.CompareScan(ctx, gate.Source{Baselines: st.Baselines, Scans: st.Scans}, sc, sum.Baseline, issues)
	if err != nil {
		return sum, err
	}
	sum.LeftOut = len(cmp.LeftOut)
	if err := sum.judge(ctx, st, cmp.Counted); err != nil {
		return sum, err
	}
	return sum, sum.readFixed(ctx, st)
}

// judge keeps the new findings to act on and what the CI rules say of
// them: every counted finding is new against the baseline.
func (s *Summary) judge(ctx context.Context, st Store, counted []findings.Issue) error {
	all, err := st.Catalog.AllBlockingRules(ctx, s.Scan.CompanyID)
	if err != nil {
		return err
	}
	ci := slices.DeleteFunc(all, func(r schema.BlockingRule) bool { return !r.Active || !r.CI })
	for _, b := range gate.Evaluate(ci, counted, func(findings.Issue) bool { return true }) {
		for _, r := range b.Rules {
			s.Blocking[b.IssueID] = append(s.Blocking[b.IssueID], r.Slug)
		}
	}
	for _, i := range counted {
		if slices.Contains(gate.ActionStatuses, i.Status) {
			s.New = append(s.New, i)
		}
	}
	slices.SortStableFunc(s.New, func(a, b findings.Issue) int { return urgencyRank(a.Urgency) - urgencyRank(b.Urgency) })
	s.NewTotal = len(s.New)
	s.New = s.New[:min(len(s.New), MaxListed)]
	return nil
}

// readFixed reads the fixed findings of the pull request's branch.
func (s *Summary) readFixed(ctx context.Context, st Store) error {
	f := issuelists.IssueFilter{Scopes: []schema.Scope{{ProjectID: s.Scan.ProjectID, Branch: s.Scan.Branch}}, Status: "fixed"}
	fixed, err := st.Lists.ListIssues(ctx, s.Scan.CompanyID, f, page.Request{Limit: MaxListed})
	s.Fixed, s.FixedTotal = fixed.Items, fixed.Count()
	return err
}

// urgencyRank orders urgency codes, most urgent first.
func urgencyRank(u string) int {
	if n := slices.Index(findings.Urgencies, u); n >= 0 {
		return n
	}
	return len(findings.Urgencies)
}

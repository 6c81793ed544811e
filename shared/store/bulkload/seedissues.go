package bulkload

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/triage"
)

// The seeding writers of issues (the demo and tests): through the one
// issue write path, like the API's writes, but with the ids, times and
// statuses the caller picks.

// CreateIssues stores new SAST issues of a company and counts them in their
// groups, through the issue write path. It is idempotent: an issue whose id
// already exists is left as it is and not counted again, so a retried batch
// with the same (deterministic) ids creates no duplicates. It returns how
// many issues were new. An empty ID gets a random uuid, an empty CreatedAt
// now; every issue needs a project id, a branch, a file path, a CWE (NoCWE
// for none), an urgency code of Urgencies and a status of Statuses, else
// ErrInvalid and nothing is written.
func CreateIssues(ctx context.Context, st *store.Store, companyID int64, issues []findings.Issue) (int, error) {
	t := table(st)
	batch := make([]findings.Issue, len(issues))
	for n, i := range issues {
		if err := i.Prepare(companyID, t.Stamp()); err != nil {
			return 0, err
		}
		batch[n] = i
	}
	created := 0
	err := t.Retrying(ctx, func() error {
		existing, err := findings.ByID(ctx, st.Findings, companyID, findings.IDs(batch))
		if err != nil {
			return err
		}
		var changes []findings.IssueChange
		for n := range batch {
			if _, ok := existing[batch[n].ID]; !ok {
				changes = append(changes, findings.IssueChange{After: &batch[n]})
			}
		}
		n, err := findings.Commit(ctx, st.Findings, companyID, changes)
		created += n
		return err
	})
	if err != nil {
		return created, err
	}
	return created, findings.Settle(ctx, st.Findings, companyID, findings.CounterKeys(companyID, batch))
}

// DeleteIssue removes an issue and its counts in one transaction.
func DeleteIssue(ctx context.Context, st *store.Store, companyID int64, id string) error {
	var before findings.Issue
	err := table(st).Retrying(ctx, func() error {
		var err error
		if before, err = findings.Consistent(ctx, st.Findings, companyID, id); err != nil {
			return err
		}
		_, err = findings.Commit(ctx, st.Findings, companyID, []findings.IssueChange{{Before: &before}})
		return err
	})
	if err != nil {
		return err
	}
	return findings.Settle(ctx, st.Findings, companyID, findings.CounterKeys(companyID, []findings.Issue{before}))
}

// SetIssueStatus changes an issue's status, by no one in particular (the
// API's change is UpdateIssue, by its caller).
func SetIssueStatus(ctx context.Context, st *store.Store, companyID int64, id, status string) (findings.Issue, error) {
	return st.Triage.UpdateIssue(ctx, companyID, id, triage.IssueUpdate{Status: &status}, findings.Actor{})
}

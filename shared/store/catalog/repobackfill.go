package catalog

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Projects written before the list's repo_url filter matched inside the
// query (a deployed table, a `make run` data directory) lack the
// lower-cased copy of their URL it matches (Project.RepoURLLower).
// BackfillProjectRepoKeys sets it, once per table: one state item records
// the first company not yet through, so a run cut short resumes there, and
// done once every company is. It is a job, never a step of a read: the
// scheduler's SLA and digest jobs call it (after it is done it costs them
// one read), the dev server runs it to the end on start, and
// bulkload.CreateTable marks a table it creates done. Until it is done a
// `GET /projects?repo_url=` misses the projects it has not reached yet
// (docs/deploying.md says how to finish it before serving).

// BackfillProjectRepoKeys gives every company's projects that have a
// repository URL its lower-cased copy, resuming where an earlier call
// stopped. It stops after the company that ends past until (the time left
// to the caller) and reports whether the backfill is complete and how many
// projects it wrote. It is idempotent: a project whose copy is right is
// not written, and one whose URL changed meanwhile is left to its writer,
// who wrote the copy too.
func (s *Catalog) BackfillProjectRepoKeys(ctx context.Context, until time.Time) (done bool, written int, err error) {
	var st schema.BackfillState
	if err := s.t.GetItem(ctx, schema.ProjectRepoBackfillKey, &st); err != nil && !errors.Is(err, ddb.ErrNotFound) {
		return false, 0, err
	}
	if st.Done {
		return true, 0, nil
	}
	last, err := s.l.LastID(ctx, "company")
	if err != nil {
		return false, 0, err
	}
	for id := max(st.Company, 1); id <= last; id++ {
		if s.t.Clock().After(until) {
			return false, written, s.t.PutItem(ctx, schema.BackfillState{Key: schema.ProjectRepoBackfillKey, Company: id}, nil)
		}
		n, err := s.backfillRepoKeys(ctx, id)
		written += n
		if err != nil {
			return false, written, err
		}
	}
	return true, written, s.t.PutItem(ctx, schema.BackfillState{Key: schema.ProjectRepoBackfillKey, Done: true}, nil)
}

// backfillRepoKeys sets the lower-cased URL of one company's projects that
// lack it (or hold a stale one).
func (s *Catalog) backfillRepoKeys(ctx context.Context, companyID int64) (int, error) {
	var todo []schema.Project
	err := ddb.Each(ctx, s.t, ddb.PKBeginsWith(schema.CompanyPK(companyID), schema.ProjectSKPrefix), func(p schema.Project) error {
		if p.RepoURLLower != strings.ToLower(p.RepoURL) {
			todo = append(todo, p)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	written := 0
	for _, p := range todo {
		upd := expression.Set(expression.Name("repo_url_lower"), expression.Value(strings.ToLower(p.RepoURL)))
		// The URL it was read with: a project whose URL a writer set
		// meanwhile got its copy from that writer.
		cond := expression.Name("repo_url").Equal(expression.Value(p.RepoURL))
		err := s.t.Update(ctx, p.Key, upd, &cond, nil)
		if errors.Is(err, ddb.ErrConflict) || errors.Is(err, ddb.ErrNotFound) {
			continue
		}
		if err != nil {
			return written, err
		}
		written++
	}
	return written, nil
}

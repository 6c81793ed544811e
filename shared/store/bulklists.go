package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
)

// The loaders below are the benchmark's, not write paths: like
// BulkLoadIssues they write, into a company that has none of the items
// yet, what the create path would write for each item (the tests compare
// both item by item), with parallel batch writes and the company's counter
// written once. They are neither conditional nor idempotent, and must never
// run beside another writer of the company.

// companyCounter is a company counter as txCount leaves it.
type companyCounter struct {
	Key
	N int `dynamodbav:"n"`
}

// reserveIDs takes n ids of a sequence at once and returns the first.
func (s *Store) reserveIDs(ctx context.Context, sequence string, n int) (int64, error) {
	var out struct {
		Value int64 `dynamodbav:"value"`
	}
	upd := expression.Add(expression.Name("value"), expression.Value(n))
	if err := s.t.Upsert(ctx, schema.SequenceKey(sequence), upd, &out); err != nil {
		return 0, err
	}
	return out.Value - int64(n) + 1, nil
}

// BulkLoadTeams writes teams (names unique in the company, ids unset) as
// CreateTeam would, counting their projects once against the company's
// current projects, and returns them with their ids.
func (s *Store) BulkLoadTeams(ctx context.Context, companyID int64, teams []Team, workers int, progress func(written, total int)) ([]Team, error) {
	first, err := s.reserveIDs(ctx, "team", len(teams))
	if err != nil {
		return nil, err
	}
	rev, err := s.ProjectsRev(ctx, companyID)
	if err != nil {
		return nil, err
	}
	var projects []Project
	if err := s.t.QueryAllConsistent(ctx, ddb.PKBeginsWith(schema.CompanyPK(companyID), "PROJECT#"), &projects); err != nil {
		return nil, err
	}
	stamp := s.t.Stamp()
	items := []any{companyCounter{Key: schema.CountKey(companyID, schema.CountTeams), N: len(teams)}}
	out := make([]Team, len(teams))
	for n, t := range teams {
		t.CompanyID, t.ID = companyID, first+int64(n)
		t.Key = schema.TeamKey(companyID, t.ID)
		t.OffsetKeys = OffsetKeys{OffsetPK: schema.TeamOffsetPK(companyID), OffsetSK: t.SK}
		t.Active, t.CreatedAt, t.UpdatedAt, t.ProjectsRev = true, stamp, stamp, rev
		sel := t.Selectors()
		t.ProjectCount = 0
		for _, p := range projects {
			if sel.Covers(p) {
				t.ProjectCount++
			}
		}
		items = append(items, t, schema.TeamNameRef{Key: schema.TeamNameKey(companyID, t.Name), TeamID: t.ID})
		if len(t.ProjectTags)+len(t.RepoURLPatterns) > 0 {
			items = append(items, sel)
		}
		out[n] = t
	}
	return out, s.bulkPut(ctx, items, workers, progress)
}

// BulkLoadIntegrations writes integrations (UUID set, id unset) as
// CreateIntegration would and returns them with their ids.
func (s *Store) BulkLoadIntegrations(ctx context.Context, companyID int64, ins []Integration, workers int, progress func(written, total int)) ([]Integration, error) {
	first, err := s.reserveIDs(ctx, "integration", len(ins))
	if err != nil {
		return nil, err
	}
	stamp := s.t.Stamp()
	items := []any{companyCounter{Key: schema.CountKey(companyID, schema.CountIntegrations), N: len(ins)}}
	out := make([]Integration, len(ins))
	for n, in := range ins {
		if id, ok := CanonicalUUID(in.UUID); !ok || id != in.UUID {
			return nil, fmt.Errorf("integration uuid %q is not a canonical uuid", in.UUID)
		}
		in.CompanyID, in.ID = companyID, first+int64(n)
		in.Prepare()
		in.CreatedAt, in.UpdatedAt = stamp, stamp
		items = append(items, in)
		out[n] = in
	}
	return out, s.bulkPut(ctx, items, workers, progress)
}

package bulkload

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// companyCounter is a company counter as the ledger's TxCount leaves it.
type companyCounter struct {
	ddb.Key
	N int `dynamodbav:"n"`
}

// reserveIDs takes n ids of a sequence at once and returns the first.
func reserveIDs(ctx context.Context, t *ddb.Table, sequence string, n int) (int64, error) {
	var out struct {
		Value int64 `dynamodbav:"value"`
	}
	upd := expression.Add(expression.Name("value"), expression.Value(n))
	if err := t.Upsert(ctx, schema.SequenceKey(sequence), upd, &out); err != nil {
		return 0, err
	}
	return out.Value - int64(n) + 1, nil
}

// Teams writes teams (names unique in the company, ids unset) as
// CreateTeam would, counting their projects once against the company's
// current projects, and returns them with their ids.
func Teams(ctx context.Context, st *store.Store, companyID int64, teams []schema.Team, workers int, progress func(written, total int)) ([]schema.Team, error) {
	t := table(st)
	first, err := reserveIDs(ctx, t, "team", len(teams))
	if err != nil {
		return nil, err
	}
	rev, err := st.Catalog.ProjectsRev(ctx, companyID)
	if err != nil {
		return nil, err
	}
	var projects []schema.Project
	if err := t.QueryAllConsistent(ctx, ddb.PKBeginsWith(schema.CompanyPK(companyID), schema.ProjectSKPrefix), &projects); err != nil {
		return nil, err
	}
	stamp := t.Stamp()
	items := []any{companyCounter{Key: schema.CountKey(companyID, schema.CountTeams), N: len(teams)}}
	out := make([]schema.Team, len(teams))
	for n, tm := range teams {
		tm.CompanyID, tm.ID = companyID, first+int64(n)
		tm.Key = schema.TeamKey(companyID, tm.ID)
		tm.OffsetKeys = schema.OffsetKeys{OffsetPK: schema.TeamOffsetPK(companyID), OffsetSK: tm.SK}
		tm.Active, tm.CreatedAt, tm.UpdatedAt, tm.ProjectsRev = true, stamp, stamp, rev
		sel := tm.Selectors()
		tm.ProjectCount = 0
		for _, p := range projects {
			if sel.Covers(p) {
				tm.ProjectCount++
			}
		}
		items = append(items, tm, schema.TeamNameRef{Key: schema.TeamNameKey(companyID, tm.Name), TeamID: tm.ID})
		if len(tm.ProjectTags)+len(tm.RepoURLPatterns) > 0 {
			items = append(items, sel)
		}
		out[n] = tm
	}
	return out, put(ctx, t, items, workers, progress)
}

// Integrations writes integrations (UUID set, id unset) as
// CreateIntegration would and returns them with their ids.
func Integrations(ctx context.Context, st *store.Store, companyID int64, ins []schema.Integration, workers int, progress func(written, total int)) ([]schema.Integration, error) {
	t := table(st)
	first, err := reserveIDs(ctx, t, "integration", len(ins))
	if err != nil {
		return nil, err
	}
	stamp := t.Stamp()
	items := []any{companyCounter{Key: schema.CountKey(companyID, schema.CountIntegrations), N: len(ins)}}
	out := make([]schema.Integration, len(ins))
	for n, in := range ins {
		if id, ok := schema.CanonicalUUID(in.UUID); !ok || id != in.UUID {
			return nil, fmt.Errorf("integration uuid %q is not a canonical uuid", in.UUID)
		}
		in.CompanyID, in.ID = companyID, first+int64(n)
		in.Prepare()
		in.CreatedAt, in.UpdatedAt = stamp, stamp
		items = append(items, in)
		out[n] = in
	}
	return out, put(ctx, t, items, workers, progress)
}

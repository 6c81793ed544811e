package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A team's project_count is kept on the team item, so reading a team costs
// the team, whatever the number of projects. It is computed when the team
// is created (from every project of the company: a write-time cost) and
// moved by ±1 when a project is created or gets its repository URL, for
// each team whose selectors (tags, URL patterns) the change affects.
//
// Project writes and team creations are ordered by a company revision of
// projects: a project write bumps it in its own transaction (conditional on
// the value it read), a team creation checks that it did not move between
// reading it and writing the team, and remembers it. A project change at
// revision P then adjusts exactly the teams counted before P, so a team
// created concurrently counts the project once. A team that names projects
// only by id needs no adjustment (projects are never deleted, and ids are
// checked at creation), so only teams with selectors have a selector item,
// in a partition of their own that a project change reads (keys by team).

// maxRevAttempts bounds the retries of a write that lost the revision race.
const maxRevAttempts = 8

// ProjectsRev reads the company's revision of projects (0 before the first
// project). A stale value only makes the conditional write retry.
func (s *Catalog) ProjectsRev(ctx context.Context, companyID int64) (int64, error) {
	var r struct {
		Rev int64 `dynamodbav:"rev"`
	}
	err := s.t.GetItem(ctx, schema.ProjectsRevKey(companyID), &r)
	if errors.Is(err, ddb.ErrNotFound) {
		return 0, nil
	}
	return r.Rev, err
}

// txBumpProjectsRev moves the revision from rev to rev+1, failing the
// transaction if another write moved it first.
func (s *Catalog) txBumpProjectsRev(companyID, rev int64) (types.TransactWriteItem, error) {
	return s.t.TxUpdate(schema.ProjectsRevKey(companyID), expression.Set(expression.Name("rev"), expression.Value(rev+1)), revIs(rev))
}

// txProjectsRevIs fails the transaction if the revision is no longer rev.
func (s *Catalog) txProjectsRevIs(companyID, rev int64) (types.TransactWriteItem, error) {
	expr, err := expression.NewBuilder().WithCondition(*revIs(rev)).Build()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(s.t.Name), Key: schema.ProjectsRevKey(companyID).AV(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

func revIs(rev int64) *expression.ConditionBuilder {
	c := expression.Name("rev").Equal(expression.Value(rev))
	if rev == 0 {
		c = expression.AttributeNotExists(expression.Name("rev")).Or(c)
	}
	return &c
}

// countCovered is the number of the company's projects t covers now, and
// the revision of projects it was counted at.
func (s *Catalog) countCovered(ctx context.Context, t schema.Team) (int, int64, error) {
	rev, err := s.ProjectsRev(ctx, t.CompanyID)
	if err != nil {
		return 0, 0, err
	}
	if len(t.ProjectIDs)+len(t.ProjectTags)+len(t.RepoURLPatterns) == 0 {
		return 0, rev, nil
	}
	var projects []schema.Project
	if err := s.t.QueryAllConsistent(ctx, ddb.PKBeginsWith(schema.CompanyPK(t.CompanyID), schema.ProjectSKPrefix), &projects); err != nil {
		return 0, 0, err
	}
	sel := t.Selectors()
	n := 0
	for _, p := range projects {
		if sel.Covers(p) {
			n++
		}
	}
	return n, rev, nil
}

// writeProject commits a project write (items, which must not touch the
// revision) together with the bump of the projects revision, retrying when
// another project write moved the revision first, then moves the project
// counts of the teams the change affects. before is the project as it was
// (nil for a new project), after as written. A failure of items' own
// conditions is returned as is.
func (s *Catalog) writeProject(ctx context.Context, before *schema.Project, after schema.Project, items []types.TransactWriteItem) error {
	var rev int64
	for attempt := 0; ; attempt++ {
		if err := ddb.Backoff(ctx, attempt); err != nil {
			return err
		}
		var err error
		if rev, err = s.ProjectsRev(ctx, after.CompanyID); err != nil {
			return err
		}
		bump, err := s.txBumpProjectsRev(after.CompanyID, rev)
		if err != nil {
			return err
		}
		err = s.t.Transact(ctx, append(slices.Clip(items), bump))
		if !ddb.ConditionFailedAt(err, len(items)) || attempt == maxRevAttempts {
			if err != nil {
				return err
			}
			break
		}
	}
	var sels []schema.TeamSelectors
	kc := expression.Key("PK").Equal(expression.Value(schema.TeamSelectorsPK(after.CompanyID)))
	if err := s.t.QueryAllConsistent(ctx, kc, &sels); err != nil {
		return err
	}
	// The adjustments go in transactions (up to maxTxItems teams each): a
	// transaction repeated after a lost answer is applied once, where a
	// repeated ADD would count twice.
	var moves []types.TransactWriteItem
	for _, sel := range sels {
		// Teams created at a later revision counted this change already.
		if sel.ProjectsRev > rev {
			continue
		}
		delta := 0
		if sel.Covers(after) {
			delta++
		}
		if before != nil && sel.Covers(*before) {
			delta--
		}
		if delta == 0 {
			continue
		}
		exists := expression.AttributeExists(expression.Name("PK"))
		move, err := s.t.TxUpdate(schema.TeamKey(after.CompanyID, sel.TeamID), expression.Add(expression.Name("project_count"), expression.Value(delta)), &exists)
		if err != nil {
			return err
		}
		moves = append(moves, move)
	}
	for start := 0; start < len(moves); start += ddb.MaxTxItems {
		if err := s.t.Transact(ctx, moves[start:min(start+ddb.MaxTxItems, len(moves))]); err != nil {
			return fmt.Errorf("teams' project counts: %w", err)
		}
	}
	return nil
}

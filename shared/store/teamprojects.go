package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
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

func projectsRevKey(companyID int64) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: "PROJECTREV"}
}

func teamSelectorsPK(companyID int64) string { return schema.CompanyPK(companyID) + "#TEAMSEL" }

// teamSelectors is the copy of a team's project selectors that project
// changes read.
type teamSelectors struct {
	Key
	TeamID          int64    `dynamodbav:"team_id"`
	ProjectIDs      []int64  `dynamodbav:"project_ids,omitempty"`
	ProjectTags     []string `dynamodbav:"project_tags,omitempty"`
	RepoURLPatterns []string `dynamodbav:"repo_url_patterns,omitempty"`
	ProjectsRev     int64    `dynamodbav:"projects_rev"`
}

// Covers reports whether a team with these selectors covers p: by id, by a
// tag (case-insensitive equality), or by a repository URL pattern
// (case-insensitive substring; a project without a URL matches none).
func (t teamSelectors) Covers(p Project) bool {
	if slices.Contains(t.ProjectIDs, p.ID) {
		return true
	}
	if slices.ContainsFunc(p.Tags, func(tag string) bool {
		return slices.ContainsFunc(t.ProjectTags, func(sel string) bool { return strings.EqualFold(tag, sel) })
	}) {
		return true
	}
	url := strings.ToLower(p.RepoURL)
	return url != "" && slices.ContainsFunc(t.RepoURLPatterns, func(sel string) bool {
		return strings.Contains(url, strings.ToLower(sel))
	})
}

func (t Team) selectors() teamSelectors {
	return teamSelectors{
		Key: Key{PK: teamSelectorsPK(t.CompanyID), SK: t.SK}, TeamID: t.ID, ProjectIDs: t.ProjectIDs,
		ProjectTags: t.ProjectTags, RepoURLPatterns: t.RepoURLPatterns, ProjectsRev: t.ProjectsRev,
	}
}

// projectsRev reads the company's revision of projects (0 before the first
// project). A stale value only makes the conditional write retry.
func (s *Store) projectsRev(ctx context.Context, companyID int64) (int64, error) {
	var r struct {
		Rev int64 `dynamodbav:"rev"`
	}
	err := s.t.GetItem(ctx, projectsRevKey(companyID), &r)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	return r.Rev, err
}

// txBumpProjectsRev moves the revision from rev to rev+1, failing the
// transaction if another write moved it first.
func (s *Store) txBumpProjectsRev(companyID, rev int64) (types.TransactWriteItem, error) {
	return s.t.TxUpdate(projectsRevKey(companyID), expression.Set(expression.Name("rev"), expression.Value(rev+1)), revIs(rev))
}

// txProjectsRevIs fails the transaction if the revision is no longer rev.
func (s *Store) txProjectsRevIs(companyID, rev int64) (types.TransactWriteItem, error) {
	expr, err := expression.NewBuilder().WithCondition(*revIs(rev)).Build()
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName: aws.String(s.t.Name), Key: projectsRevKey(companyID).AV(), ConditionExpression: expr.Condition(),
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
func (s *Store) countCovered(ctx context.Context, t Team) (int, int64, error) {
	rev, err := s.projectsRev(ctx, t.CompanyID)
	if err != nil {
		return 0, 0, err
	}
	if len(t.ProjectIDs)+len(t.ProjectTags)+len(t.RepoURLPatterns) == 0 {
		return 0, rev, nil
	}
	var projects []Project
	if err := s.t.QueryAllConsistent(ctx, ddb.PKBeginsWith(schema.CompanyPK(t.CompanyID), "PROJECT#"), &projects); err != nil {
		return 0, 0, err
	}
	sel := t.selectors()
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
func (s *Store) writeProject(ctx context.Context, before *Project, after Project, items []types.TransactWriteItem) error {
	var rev int64
	for attempt := 0; ; attempt++ {
		if err := ddb.Backoff(ctx, attempt); err != nil {
			return err
		}
		var err error
		if rev, err = s.projectsRev(ctx, after.CompanyID); err != nil {
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
	var sels []teamSelectors
	kc := expression.Key("PK").Equal(expression.Value(teamSelectorsPK(after.CompanyID)))
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
		move, err := s.t.TxUpdate(teamKey(after.CompanyID, sel.TeamID), expression.Add(expression.Name("project_count"), expression.Value(delta)), &exists)
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

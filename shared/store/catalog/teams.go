package catalog

import (
	"context"
	"strconv"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// CreateTeam stores a new active team with the next team id and the number
// of projects it covers. The name guard, the team, the company's team
// count and the team's selectors are written in one transaction, so a name
// already used in the company (case-insensitive) is ddb.ErrConflict and
// nothing is written.
func (s *Catalog) CreateTeam(ctx context.Context, t schema.Team) (schema.Team, error) {
	id, err := s.l.NextID(ctx, "team")
	if err != nil {
		return schema.Team{}, err
	}
	t.ID = id
	t.Key = schema.TeamKey(t.CompanyID, id)
	t.OffsetKeys = schema.OffsetKeys{OffsetPK: schema.TeamOffsetPK(t.CompanyID), OffsetSK: t.SK}
	t.Active = true
	t.CreatedAt = s.t.Stamp()
	t.UpdatedAt = t.CreatedAt
	for attempt := 0; ; attempt++ {
		if err := ddb.Backoff(ctx, attempt); err != nil {
			return schema.Team{}, err
		}
		if t.ProjectCount, t.ProjectsRev, err = s.countCovered(ctx, t); err != nil {
			return schema.Team{}, err
		}
		items, err := s.teamWrites(ctx, t)
		if err != nil {
			return schema.Team{}, err
		}
		err = s.t.Transact(ctx, items)
		// The last item checks the revision the count was made at.
		if !ddb.ConditionFailedAt(err, len(items)-1) || attempt == maxRevAttempts {
			return t, err
		}
	}
}

// teamWrites are the items of a team's creation; the revision check last.
func (s *Catalog) teamWrites(ctx context.Context, t schema.Team) ([]types.TransactWriteItem, error) {
	var items []types.TransactWriteItem
	add := func(it types.TransactWriteItem, err error) error {
		items = append(items, it)
		return err
	}
	if err := add(s.t.TxPutNew(schema.TeamNameRef{Key: schema.TeamNameKey(t.CompanyID, t.Name), TeamID: t.ID})); err != nil {
		return nil, err
	}
	if err := add(s.t.TxPutNew(t)); err != nil {
		return nil, err
	}
	if err := add(s.l.TxCount(t.CompanyID, schema.CountTeams, 1)); err != nil {
		return nil, err
	}
	if len(t.ProjectTags)+len(t.RepoURLPatterns) > 0 {
		if err := add(s.t.TxPutNew(t.Selectors())); err != nil {
			return nil, err
		}
	}
	audit, err := s.l.TxAudit(ctx, t.CompanyID, ledger.AuditEntry{
		Action: "team.create", TargetType: "team", TargetID: strconv.FormatInt(t.ID, 10),
		Changes: map[string]ledger.Change{
			"name": {After: t.Name}, "member_ids": {After: t.MemberIDs}, "project_ids": {After: t.ProjectIDs},
			"project_tags": {After: t.ProjectTags}, "repo_url_patterns": {After: t.RepoURLPatterns},
		},
	})
	if err != nil {
		return nil, err
	}
	items = append(items, audit...)
	if err := add(s.txProjectsRevIs(t.CompanyID, t.ProjectsRev)); err != nil {
		return nil, err
	}
	return items, nil
}

// GetTeam reads a team of a company.
func (s *Catalog) GetTeam(ctx context.Context, companyID, teamID int64) (schema.Team, error) {
	var t schema.Team
	err := s.t.GetItem(ctx, schema.TeamKey(companyID, teamID), &t)
	return t, err
}

// TeamByName finds a team of a company by name (case-insensitive).
func (s *Catalog) TeamByName(ctx context.Context, companyID int64, name string) (schema.Team, error) {
	var ref schema.TeamNameRef
	if err := s.t.GetItem(ctx, schema.TeamNameKey(companyID, name), &ref); err != nil {
		return schema.Team{}, err
	}
	return s.GetTeam(ctx, companyID, ref.TeamID)
}

func TeamList(companyID int64) page.List {
	return page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(schema.TeamPrefix), Forward: true,
		OffsetPartition: schema.TeamOffsetPK(companyID)}
}

// ListTeams reads one page of a company's teams by id, with the company's
// total.
func (s *Catalog) ListTeams(ctx context.Context, companyID int64, q page.Request) (page.Page[schema.Team], error) {
	return counted.Page[schema.Team](ctx, s.t, s.l, companyID, TeamList(companyID), q, schema.CountTeams)
}

// TeamCount is the number of a company's teams (a counter kept on write).
func (s *Catalog) TeamCount(ctx context.Context, companyID int64) (int, error) {
	return s.l.CompanyCount(ctx, companyID, schema.CountTeams)
}

// AllTeams returns every team of a company, by id (the naive baseline of
// the bench; handlers read pages).
func (s *Catalog) AllTeams(ctx context.Context, companyID int64) ([]schema.Team, error) {
	var out []schema.Team
	err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), schema.TeamPrefix), true, &out)
	return out, err
}

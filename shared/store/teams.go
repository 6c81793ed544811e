package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Team groups users and the projects they may see. Projects are covered by
// explicit ids and by selectors (tags, repository URL fragments) that are
// resolved when the team is read, so projects created later are covered too.
type Team struct {
	Key
	OffsetKeys
	ID              int64    `dynamodbav:"id"`
	CompanyID       int64    `dynamodbav:"company_id"`
	Name            string   `dynamodbav:"name"`
	Active          bool     `dynamodbav:"active"`
	MemberIDs       []int64  `dynamodbav:"member_ids,omitempty"`
	ProjectIDs      []int64  `dynamodbav:"project_ids,omitempty"`
	ProjectTags     []string `dynamodbav:"project_tags,omitempty"`
	RepoURLPatterns []string `dynamodbav:"repo_url_patterns,omitempty"`
	// ProjectCount is the number of projects the team covers, kept on
	// write (see teamprojects.go); ProjectsRev the revision of projects it
	// was counted at.
	ProjectCount int    `dynamodbav:"project_count"`
	ProjectsRev  int64  `dynamodbav:"projects_rev"`
	CreatedAt    string `dynamodbav:"created_at"`
	UpdatedAt    string `dynamodbav:"updated_at"`
}

const teamPrefix = "TEAM#"

func teamKey(companyID, teamID int64) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: fmt.Sprintf("%s%012d", teamPrefix, teamID)}
}

// teamNameKey guards name uniqueness inside a company (case-insensitive).
func teamNameKey(companyID int64, name string) Key {
	return Key{PK: schema.CompanyPK(companyID), SK: "TEAMNAME#" + strings.ToLower(name)}
}

type teamNameRef struct {
	Key
	TeamID int64 `dynamodbav:"team_id"`
}

// CreateTeam stores a new active team with the next team id and the number
// of projects it covers. The name guard, the team, the company's team
// count and the team's selectors are written in one transaction, so a name
// already used in the company (case-insensitive) is ErrConflict and
// nothing is written.
func (s *Store) CreateTeam(ctx context.Context, t Team) (Team, error) {
	id, err := s.NextID(ctx, "team")
	if err != nil {
		return Team{}, err
	}
	t.ID = id
	t.Key = teamKey(t.CompanyID, id)
	t.OffsetKeys = OffsetKeys{OffsetPK: teamList(t.CompanyID).OffsetPartition, OffsetSK: t.SK}
	t.Active = true
	t.CreatedAt = s.t.Stamp()
	t.UpdatedAt = t.CreatedAt
	for attempt := 0; ; attempt++ {
		if err := ddb.Backoff(ctx, attempt); err != nil {
			return Team{}, err
		}
		if t.ProjectCount, t.ProjectsRev, err = s.countCovered(ctx, t); err != nil {
			return Team{}, err
		}
		items, err := s.teamWrites(ctx, t)
		if err != nil {
			return Team{}, err
		}
		err = s.t.Transact(ctx, items)
		// The last item checks the revision the count was made at.
		if !ddb.ConditionFailedAt(err, len(items)-1) || attempt == maxRevAttempts {
			return t, err
		}
	}
}

// teamWrites are the items of a team's creation; the revision check last.
func (s *Store) teamWrites(ctx context.Context, t Team) ([]types.TransactWriteItem, error) {
	var items []types.TransactWriteItem
	add := func(it types.TransactWriteItem, err error) error {
		items = append(items, it)
		return err
	}
	if err := add(s.t.TxPutNew(teamNameRef{Key: teamNameKey(t.CompanyID, t.Name), TeamID: t.ID})); err != nil {
		return nil, err
	}
	if err := add(s.t.TxPutNew(t)); err != nil {
		return nil, err
	}
	if err := add(s.l.TxCount(t.CompanyID, schema.CountTeams, 1)); err != nil {
		return nil, err
	}
	if len(t.ProjectTags)+len(t.RepoURLPatterns) > 0 {
		if err := add(s.t.TxPutNew(t.selectors())); err != nil {
			return nil, err
		}
	}
	audit, err := s.l.TxAudit(ctx, t.CompanyID, AuditEntry{
		Action: "team.create", TargetType: "team", TargetID: strconv.FormatInt(t.ID, 10),
		Changes: map[string]Change{
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
func (s *Store) GetTeam(ctx context.Context, companyID, teamID int64) (Team, error) {
	var t Team
	err := s.t.GetItem(ctx, teamKey(companyID, teamID), &t)
	return t, err
}

// TeamByName finds a team of a company by name (case-insensitive).
func (s *Store) TeamByName(ctx context.Context, companyID int64, name string) (Team, error) {
	var ref teamNameRef
	if err := s.t.GetItem(ctx, teamNameKey(companyID, name), &ref); err != nil {
		return Team{}, err
	}
	return s.GetTeam(ctx, companyID, ref.TeamID)
}

func teamList(companyID int64) page.List {
	return page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(teamPrefix), Forward: true,
		OffsetPartition: schema.CompanyPK(companyID) + "#TEAMS"}
}

// TeamsPage reads one page of a company's teams, by id.
func (s *Store) TeamsPage(ctx context.Context, companyID int64, q PageQuery) ([]Team, PageResult, error) {
	out := []Team{}
	res, err := s.readPage(ctx, teamList(companyID), q, &out)
	return out, res, err
}

// TeamCount is the number of a company's teams (a counter kept on write).
func (s *Store) TeamCount(ctx context.Context, companyID int64) (int, error) {
	return s.l.CompanyCount(ctx, companyID, schema.CountTeams)
}

// ListTeams returns every team of a company, by id (the naive baseline of
// the bench; handlers read pages).
func (s *Store) ListTeams(ctx context.Context, companyID int64) ([]Team, error) {
	var out []Team
	err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.CompanyPK(companyID), teamPrefix), true, &out)
	return out, err
}

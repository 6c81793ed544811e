package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Team groups users and the projects they may see. Projects are covered by
// explicit ids and by selectors (tags, repository URL fragments) that are
// resolved when the team is read, so projects created later are covered too.
type Team struct {
	Key
	ID              int64    `dynamodbav:"id"`
	CompanyID       int64    `dynamodbav:"company_id"`
	Name            string   `dynamodbav:"name"`
	Active          bool     `dynamodbav:"active"`
	MemberIDs       []int64  `dynamodbav:"member_ids,omitempty"`
	ProjectIDs      []int64  `dynamodbav:"project_ids,omitempty"`
	ProjectTags     []string `dynamodbav:"project_tags,omitempty"`
	RepoURLPatterns []string `dynamodbav:"repo_url_patterns,omitempty"`
	CreatedAt       string   `dynamodbav:"created_at"`
	UpdatedAt       string   `dynamodbav:"updated_at"`
}

const teamPrefix = "TEAM#"

func teamKey(companyID, teamID int64) Key {
	return Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("%s%012d", teamPrefix, teamID)}
}

// teamNameKey guards name uniqueness inside a company (case-insensitive).
func teamNameKey(companyID int64, name string) Key {
	return Key{PK: CompanyPK(companyID), SK: "TEAMNAME#" + strings.ToLower(name)}
}

type teamNameRef struct {
	Key
	TeamID int64 `dynamodbav:"team_id"`
}

// CreateTeam stores a new active team with the next team id. The name guard
// and the team are written in one transaction, so a name already used in the
// company (case-insensitive) is ErrConflict and nothing is written.
func (s *Store) CreateTeam(ctx context.Context, t Team) (Team, error) {
	id, err := s.NextID(ctx, "team")
	if err != nil {
		return Team{}, err
	}
	t.ID = id
	t.Key = teamKey(t.CompanyID, id)
	t.Active = true
	t.CreatedAt = now()
	t.UpdatedAt = t.CreatedAt
	guard, err := s.txPutNew(teamNameRef{Key: teamNameKey(t.CompanyID, t.Name), TeamID: id})
	if err != nil {
		return Team{}, err
	}
	item, err := s.txPutNew(t)
	if err != nil {
		return Team{}, err
	}
	audit, err := s.txAudit(ctx, t.CompanyID, AuditEntry{
		Action: "team.create", TargetType: "team", TargetID: strconv.FormatInt(id, 10),
		Changes: map[string]Change{
			"name": {After: t.Name}, "member_ids": {After: t.MemberIDs}, "project_ids": {After: t.ProjectIDs},
			"project_tags": {After: t.ProjectTags}, "repo_url_patterns": {After: t.RepoURLPatterns},
		},
	})
	if err != nil {
		return Team{}, err
	}
	if err := s.transact(ctx, append([]types.TransactWriteItem{guard, item}, audit...)); err != nil {
		return Team{}, err
	}
	return t, nil
}

// GetTeam reads a team of a company.
func (s *Store) GetTeam(ctx context.Context, companyID, teamID int64) (Team, error) {
	var t Team
	err := s.getItem(ctx, teamKey(companyID, teamID), &t)
	return t, err
}

// TeamByName finds a team of a company by name (case-insensitive).
func (s *Store) TeamByName(ctx context.Context, companyID int64, name string) (Team, error) {
	var ref teamNameRef
	if err := s.getItem(ctx, teamNameKey(companyID, name), &ref); err != nil {
		return Team{}, err
	}
	return s.GetTeam(ctx, companyID, ref.TeamID)
}

// ListTeams returns every team of a company, by id.
func (s *Store) ListTeams(ctx context.Context, companyID int64) ([]Team, error) {
	var out []Team
	err := s.queryAll(ctx, "", pkBeginsWith(CompanyPK(companyID), teamPrefix), true, &out)
	return out, err
}

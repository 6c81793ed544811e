package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/store/ddb"
)

// The keys and items of the catalog: projects, teams, policies, blocking
// rules, integrations and SLA settings.

// Project is a scanned code base of a company.
type Project struct {
	ddb.Key
	ID        int64    `dynamodbav:"id"`
	CompanyID int64    `dynamodbav:"company_id"`
	Name      string   `dynamodbav:"name"`
	RepoURL   string   `dynamodbav:"repo_url,omitempty"`
	Tags      []string `dynamodbav:"tags,omitempty"`
	Branches  []string `dynamodbav:"branches,omitempty"`
	// DefaultBranch is the branch pull requests merge into; empty until
	// set, when the branch of the project's first scan stands for it.
	DefaultBranch string `dynamodbav:"default_branch,omitempty"`
	CreatedAt     string `dynamodbav:"created_at"`

	// RepoURLLower is RepoURL lower-cased, written with it: the list's
	// repo_url filter (a substring, ignoring case) matches it inside the
	// query (catalog.ListProjectsByRepo; BackfillProjectRepoKeys gives it
	// to the projects written before it existed).
	RepoURLLower string `dynamodbav:"repo_url_lower,omitempty"`
}

func ProjectKey(companyID, projectID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf(ProjectSKPrefix+"%012d", projectID)}
}

// ProjectNameKey guards name uniqueness inside a company and serves look-ups
// by name.
func ProjectNameKey(companyID int64, name string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "PROJECTNAME#" + strings.ToLower(name)}
}

type ProjectNameRef struct {
	ddb.Key
	ProjectID int64 `dynamodbav:"project_id"`
}

// Team groups users and the projects they may see. Projects are covered by
// explicit ids and by selectors (tags, repository URL fragments) that are
// resolved when the team is read, so projects created later are covered too.
type Team struct {
	ddb.Key
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

const TeamPrefix = "TEAM#"

func TeamKey(companyID, teamID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("%s%012d", TeamPrefix, teamID)}
}

// TeamNameKey guards name uniqueness inside a company (case-insensitive).
func TeamNameKey(companyID int64, name string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "TEAMNAME#" + strings.ToLower(name)}
}

type TeamNameRef struct {
	ddb.Key
	TeamID int64 `dynamodbav:"team_id"`
}

func ProjectsRevKey(companyID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "PROJECTREV"}
}

func TeamSelectorsPK(companyID int64) string { return CompanyPK(companyID) + "#TEAMSEL" }

// TeamSelectors is the copy of a team's project selectors that project
// changes read.
type TeamSelectors struct {
	ddb.Key
	TeamID          int64    `dynamodbav:"team_id"`
	ProjectIDs      []int64  `dynamodbav:"project_ids,omitempty"`
	ProjectTags     []string `dynamodbav:"project_tags,omitempty"`
	RepoURLPatterns []string `dynamodbav:"repo_url_patterns,omitempty"`
	ProjectsRev     int64    `dynamodbav:"projects_rev"`
}

// Covers reports whether a team with these selectors covers p: by id, by a
// tag (case-insensitive equality), or by a repository URL pattern
// (case-insensitive substring; a project without a URL matches none).
func (t TeamSelectors) Covers(p Project) bool {
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

func (t Team) Selectors() TeamSelectors {
	return TeamSelectors{
		Key: ddb.Key{PK: TeamSelectorsPK(t.CompanyID), SK: t.SK}, TeamID: t.ID, ProjectIDs: t.ProjectIDs,
		ProjectTags: t.ProjectTags, RepoURLPatterns: t.RepoURLPatterns, ProjectsRev: t.ProjectsRev,
	}
}

// Policy is a scanning policy of a company. Deactivation keeps the record.
type Policy struct {
	ddb.Key
	ID               int64    `dynamodbav:"id"`
	CompanyID        int64    `dynamodbav:"company_id"`
	PolicyType       string   `dynamodbav:"policy_type"`
	Name             string   `dynamodbav:"name"`
	Description      string   `dynamodbav:"description"`
	GuidanceText     string   `dynamodbav:"guidance_text"`
	CWEs             []string `dynamodbav:"cwes,omitempty"`
	Excludes         []string `dynamodbav:"excludes,omitempty"`
	Projects         []string `dynamodbav:"projects,omitempty"`
	GlobPattern      string   `dynamodbav:"glob_pattern"`
	SourceType       string   `dynamodbav:"source_type"`
	InstructionType  string   `dynamodbav:"instruction_type"`
	Active           bool     `dynamodbav:"active"`
	Approved         bool     `dynamodbav:"approved"`
	ApprovedBy       *int64   `dynamodbav:"approved_by,omitempty"`
	RepoPolicyFile   *int64   `dynamodbav:"repo_policy_file,omitempty"`
	ParentPolicy     *int64   `dynamodbav:"parent_policy,omitempty"`
	Version          int64    `dynamodbav:"version"`
	Archived         bool     `dynamodbav:"archived"`
	ReadOnly         bool     `dynamodbav:"read_only"`
	CreatedByService bool     `dynamodbav:"created_by_service"`
	CreatedAt        string   `dynamodbav:"created_at"`
}

// PolicySKPrefix begins the sort key of every policy item of a company
// (the policy list reads the prefix).
const PolicySKPrefix = "POLICY#"

func PolicyKey(companyID, policyID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf(PolicySKPrefix+"%012d", policyID)}
}

// BlockingRule is a company's CI gate rule: a scan is blocked when one of
// its issues meets every condition of an active rule.
type BlockingRule struct {
	ddb.Key
	ID         int64          `dynamodbav:"id"`
	CompanyID  int64          `dynamodbav:"company_id"`
	Slug       string         `dynamodbav:"slug"`
	Name       string         `dynamodbav:"name"`
	Active     bool           `dynamodbav:"active"`
	CI         bool           `dynamodbav:"ci"`
	Conditions RuleConditions `dynamodbav:"conditions"`
	CreatedAt  string         `dynamodbav:"created_at"`
	UpdatedAt  string         `dynamodbav:"updated_at"`
}

// RuleConditions must all hold for an issue to trigger a rule; an empty
// condition holds for every issue.
type RuleConditions struct {
	MinUrgency string   `dynamodbav:"min_urgency,omitempty"` // CR, HI, ME or LO
	CWEs       []int    `dynamodbav:"cwes,omitempty"`        // CWE numbers
	Paths      []string `dynamodbav:"paths,omitempty"`       // globs over the file path
	Statuses   []string `dynamodbav:"statuses,omitempty"`    // issue statuses
	OnlyNew    bool     `dynamodbav:"only_new,omitempty"`    // not open on the default branch
}

const BlockingRulePrefix = "BLOCKRULE#"

func BlockingRuleKey(companyID, id int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("%s%012d", BlockingRulePrefix, id)}
}

// BlockingRuleSlugKey guards slug uniqueness inside a company and serves
// look-ups by slug (slugs are stored lower-case).
func BlockingRuleSlugKey(companyID int64, slug string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "BLOCKRULESLUG#" + slug}
}

type BlockingRuleSlugRef struct {
	ddb.Key
	RuleID int64 `dynamodbav:"rule_id"`
}

// Integration is a connection to a source-code host. The item is keyed by
// uuid (the id clients use in paths), and listed in id order through GSI1.
// The token is stored only sealed (see package secrets).
type Integration struct {
	ddb.Key
	OffsetKeys
	GSI1PK        string   `dynamodbav:"GSI1PK"`
	GSI1SK        string   `dynamodbav:"GSI1SK"`
	ID            int64    `dynamodbav:"id"`
	UUID          string   `dynamodbav:"uuid"`
	CompanyID     int64    `dynamodbav:"company_id"`
	Name          string   `dynamodbav:"name"`
	AccountID     string   `dynamodbav:"account_id"`
	AccountName   string   `dynamodbav:"account_name"`
	OrgAllowlist  []string `dynamodbav:"org_allowlist,omitempty"`
	BaseURL       string   `dynamodbav:"base_url"`
	GatewayPrefix string   `dynamodbav:"gateway_prefix"`
	// Provider is the host's kind: "github" (GitHub, GitHub Enterprise) or
	// "gitlab" (gitlab.com, self-managed GitLab); empty in items stored
	// before it existed, which are GitHub's (see HostProvider).
	Provider    string `dynamodbav:"provider,omitempty"`
	Expired     bool   `dynamodbav:"expired"`
	SealedToken string `dynamodbav:"sealed_token"`
	// SealedWebhookSecret is the secret the host signs the integration's
	// webhook deliveries with (HMAC-SHA256 of the body), sealed like the
	// token but bound to its own record; empty until an admin sets one.
	SealedWebhookSecret string `dynamodbav:"sealed_webhook_secret,omitempty"`
	// InlineComments is the setting of inline review comments (nil: off).
	InlineComments *InlineComments `dynamodbav:"inline_comments,omitempty"`
	// Revision grows by one on every update; updates are conditional on the
	// revision they read, so two concurrent updates cannot interleave.
	Revision  int64  `dynamodbav:"revision"`
	CreatedAt string `dynamodbav:"created_at"`
	UpdatedAt string `dynamodbav:"updated_at"`
}

// Host providers of an integration.
const (
	ProviderGitHub = "github"
	ProviderGitLab = "gitlab"
)

// HostProvider is the integration's host kind, ProviderGitHub when unset.
func (in Integration) HostProvider() string {
	if in.Provider == "" {
		return ProviderGitHub
	}
	return in.Provider
}

func IntegrationKey(companyID int64, id string) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "SCM#" + id}
}

func IntegrationListPK(companyID int64) string { return CompanyPK(companyID) + "#SCM" }

// Prepare sets the keys and first revision of a new integration with its
// company and id set.
func (in *Integration) Prepare() {
	in.Key = IntegrationKey(in.CompanyID, in.UUID)
	in.GSI1PK = IntegrationListPK(in.CompanyID)
	in.GSI1SK = fmt.Sprintf("%012d", in.ID)
	in.OffsetKeys = OffsetKeys{OffsetPK: IntegrationListPK(in.CompanyID), OffsetSK: in.GSI1SK}
	in.Revision = 1
}

// SLASettingsItem is a company's SLA settings.
type SLASettingsItem struct {
	ddb.Key
	DaysToFix   map[string]int `dynamodbav:"days_to_fix"`
	DueSoonDays int            `dynamodbav:"due_soon_days"`
	// AcceptanceDays is 0 in settings stored before it existed (the default).
	AcceptanceDays             int    `dynamodbav:"acceptance_days,omitempty"`
	DismissalRulesNeedApproval bool   `dynamodbav:"dismissal_rules_need_approval,omitempty"`
	UpdatedAt                  string `dynamodbav:"updated_at"`
}

func SLASettingsKey(companyID int64) ddb.Key {
	return ddb.Key{PK: CompanyPK(companyID), SK: "SETTINGS#SLA"}
}

// TeamOffsetPK is the Offset index partition of a company's teams.
func TeamOffsetPK(companyID int64) string { return CompanyPK(companyID) + "#TEAMS" }

package demo

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/schema"
)

func init() { register(20, seedAdmin) }

// seedAdmin adds teams, policies (active and inactive) and source-code-host
// integrations. Integration tokens are random, sealed like real ones, and
// written nowhere else: a PATCH that re-verifies them reaches the real host
// and fails, which is how the demo shows verification.
func seedAdmin(ctx context.Context, st *store.Store, c *Company) error {
	teamIDs, err := seedTeams(ctx, st, c)
	if err != nil {
		return err
	}
	policyIDs, err := seedPolicies(ctx, st, c)
	if err != nil {
		return err
	}
	uuids, err := seedIntegrations(ctx, st, c)
	if err != nil {
		return err
	}
	c.Resources["team_ids"] = teamIDs
	c.Resources["policy_ids"] = policyIDs
	c.Resources["integration_uuids"] = uuids
	return nil
}

// slug is the company's name as a host organisation name.
func (c *Company) slug() string {
	return strings.ToLower(strings.ReplaceAll(c.Name, " ", "-"))
}

func seedTeams(ctx context.Context, st *store.Store, c *Company) ([]int64, error) {
	projects, err := st.Catalog.AllProjects(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	var first []int64
	var fragment string
	if len(projects) > 0 {
		first = []int64{projects[0].ID}
		fragment = strings.TrimPrefix(strings.TrimPrefix(projects[0].RepoURL, "https://"), "http://")
	}
	member := func(roles ...string) []int64 {
		var out []int64
		for _, r := range roles {
			if u := c.UserByRole(r); u != nil {
				out = append(out, u.ID)
			}
		}
		return out
	}
	teams := []schema.Team{
		{Name: "Application Security", MemberIDs: member("admin", "content-access-manager", "policy-manager"), ProjectIDs: first, ProjectTags: []string{"demo"}},
		{Name: []string{"Payments", "Billing"}[c.Index()], MemberIDs: member("member"), RepoURLPatterns: []string{fragment}},
		{Name: "Platform", MemberIDs: member("integrations-manager", "ci-uploader"), ProjectTags: []string{"infra"}, RepoURLPatterns: []string{"/" + c.slug() + "/"}},
	}
	if fragment == "" {
		teams[1].RepoURLPatterns = nil
	}
	var ids []int64
	for _, t := range teams {
		t.CompanyID = c.ID
		created, err := st.Catalog.CreateTeam(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("demo team %s: %w", t.Name, err)
		}
		ids = append(ids, created.ID)
	}
	return ids, nil
}

func seedPolicies(ctx context.Context, st *store.Store, c *Company) ([]int64, error) {
	approver := c.UserByRole("policy-manager").ID
	repoFile := int64(100 + c.Index())
	policies := []schema.Policy{
		{PolicyType: "BLAST", Name: "Block SQL injection in services", Description: "Fails a scan that adds a SQL injection sink.",
			GuidanceText: "Use parameterised queries or the ORM's query builder.", CWEs: []string{"CWE-89", "CWE-564"},
			Excludes: []string{"**/testdata/**"}, Projects: []string{"payments-service"}, GlobPattern: "src/**",
			SourceType: "Web", InstructionType: "overwrite", Active: true, Approved: true, ApprovedBy: &approver,
			Version: 3, CreatedAt: "2025-01-14T09:12:00Z"},
		{PolicyType: "BLAST", Name: "No hard-coded secrets", Description: "Flags credentials committed to the repository.",
			GuidanceText: "Load secrets from the environment or a secrets manager.", CWEs: []string{"CWE-798"},
			GlobPattern: "**/*", SourceType: "Web", InstructionType: "overwrite", Active: true, Version: 1,
			CreatedAt: "2025-02-03T15:40:00Z"},
		{PolicyType: "BLAST", Name: "Repository policy: path traversal", Description: "Imported from the repository's policy file.",
			GuidanceText: "Normalise paths and check them against an allowed root.", CWEs: []string{"CWE-22"},
			GlobPattern: "lib/**", SourceType: "Web", InstructionType: "overwrite", Active: true, Approved: true,
			ApprovedBy: &approver, RepoPolicyFile: &repoFile, Version: 2,
			ReadOnly: true, CreatedByService: true, CreatedAt: "2025-03-21T08:00:00Z"},
		{PolicyType: "BLAST", Name: "Legacy XSS rule (superseded)", Description: "Replaced by the framework-aware XSS rule.",
			GuidanceText: "Escape output with the template engine.", CWEs: []string{"CWE-79"}, Excludes: []string{"web/legacy/**"},
			GlobPattern: "web/**", SourceType: "Web", InstructionType: "overwrite", Active: false, Approved: true,
			ApprovedBy: &approver, Version: 5, Archived: true, CreatedAt: "2024-06-30T12:00:00Z"},
		{PolicyType: "BLAST", Name: "Block SQL injection in services (draft v4)", Description: "Adds stored procedures to the rule.",
			GuidanceText: "Use parameterised queries, also in stored procedures.", CWEs: []string{"CWE-89"},
			GlobPattern: "src/**", SourceType: "Web", InstructionType: "overwrite", Version: 4, CreatedAt: "2025-04-02T10:30:00Z"},
	}
	var ids []int64
	for n, p := range policies {
		p.CompanyID = c.ID
		if n == len(policies)-1 {
			p.ParentPolicy = &ids[0] // the draft derives from the first policy
		}
		created, err := st.Catalog.CreatePolicy(ctx, p)
		if err != nil {
			return nil, err
		}
		ids = append(ids, created.ID)
	}
	return ids, nil
}

func seedIntegrations(ctx context.Context, st *store.Store, c *Company) ([]string, error) {
	sealer, err := secrets.FromEnv(ctx)
	if err != nil {
		return nil, err
	}
	org := c.slug()
	list := []schema.Integration{
		{Name: "GitHub.com (" + org + ")", AccountID: fmt.Sprint(48213377 + c.Index()), AccountName: org + "-ci",
			OrgAllowlist: []string{org, org + "-labs"}, BaseURL: "https://api.github.com"},
		{Name: "GitHub Enterprise", AccountID: fmt.Sprint(1207 + c.Index()), AccountName: "svc-codescan",
			OrgAllowlist: []string{"platform", "payments"}, BaseURL: "https://github." + org + ".example", GatewayPrefix: "/api/v3", Expired: true},
	}
	if c.Index() == 0 {
		list = append(list, schema.Integration{Name: "GitHub Enterprise (EU)", AccountID: "3391", AccountName: "svc-codescan-eu",
			BaseURL: "https://git.eu." + org + ".example", GatewayPrefix: "/api/v3"})
	}
	var uuids []string
	for _, in := range list {
		in.CompanyID = c.ID
		in.UUID = catalog.NewIntegrationUUID()
		if in.SealedToken, err = sealer.Seal(ctx, "ghp_"+rand.Text(), catalog.IntegrationTokenRecord(c.ID, in.UUID)); err != nil {
			return nil, err
		}
		if _, err := st.Catalog.CreateIntegration(ctx, in); err != nil {
			return nil, err
		}
		uuids = append(uuids, in.UUID)
	}
	return uuids, nil
}

package demo

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

func init() { register(40, seedClient) }

// seedClient adds the CI gate's blocking rules (two for CI, one not) and
// lists the ids the client routes address.
func seedClient(ctx context.Context, st *store.Store, c *Company) error {
	rules := []schema.BlockingRule{
		{Slug: "block-critical", Name: "Block critical issues", Active: true, CI: true,
			Conditions: schema.RuleConditions{MinUrgency: "CR", Statuses: []string{"open"}}},
		{Slug: "new-injection", Name: "New injection findings", Active: true, CI: true,
			Conditions: schema.RuleConditions{CWEs: []int{78, 89}, OnlyNew: true}},
		{Slug: "legacy-high", Name: "High issues (dashboard only)", Active: true, CI: false,
			Conditions: schema.RuleConditions{MinUrgency: "HI", Paths: []string{"src/**"}}},
	}
	var ids []int64
	for _, r := range rules {
		r.CompanyID = c.ID
		created, err := st.Catalog.CreateBlockingRule(ctx, r)
		if err != nil {
			return err
		}
		ids = append(ids, created.ID)
	}
	page, err := st.Catalog.ListProjects(ctx, c.ID, storepage.Request{Limit: 100})
	if err != nil {
		return err
	}
	var projectIDs []int64
	for _, p := range page.Items {
		projectIDs = append(projectIDs, p.ID)
	}
	c.Resources["blocking_rule_ids"] = ids
	c.Resources["project_ids"] = projectIDs
	return nil
}

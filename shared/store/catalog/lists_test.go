package catalog_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// TestListsPage reads each of the area's lists in pages of two, by token
// and by number: five rows of company 1, none of company 2's, the
// company's total on every page.
func TestListsPage(t *testing.T) {
	st := testenv.NewStore(t)
	ctx := context.Background()
	for c := int64(1); c <= 2; c++ {
		for i := range 5 {
			name := fmt.Sprintf("c%d-%d", c, i)
			for _, err := range []error{
				second(st.Catalog.CreateTeam(ctx, schema.Team{CompanyID: c, Name: name})),
				second(st.Catalog.CreateIntegration(ctx, schema.Integration{CompanyID: c, UUID: catalog.NewIntegrationUUID(), Name: name, SealedToken: "sealed"})),
				second(st.Catalog.CreateProject(ctx, schema.Project{CompanyID: c, Name: name})),
				second(st.Catalog.CreatePolicy(ctx, schema.Policy{CompanyID: c, Name: name, Active: true})),
				second(st.Catalog.CreateBlockingRule(ctx, schema.BlockingRule{CompanyID: c, Slug: name, Name: name, Active: true})),
			} {
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
	}
	five := testenv.Total(5)
	teams := testenv.Pages(t, 2, five, func(q page.Request) (page.Page[schema.Team], error) { return st.Catalog.ListTeams(ctx, 1, q) })
	integrations := testenv.Pages(t, 2, five, func(q page.Request) (page.Page[schema.Integration], error) {
		return st.Catalog.ListIntegrations(ctx, 1, q)
	})
	projects := testenv.Pages(t, 2, five, func(q page.Request) (page.Page[schema.Project], error) { return st.Catalog.ListProjects(ctx, 1, q) })
	policies := testenv.Pages(t, 2, five, func(q page.Request) (page.Page[schema.Policy], error) { return st.Catalog.ListPolicies(ctx, 1, q) })
	rules := testenv.Pages(t, 2, five, func(q page.Request) (page.Page[schema.BlockingRule], error) {
		return st.Catalog.ListBlockingRules(ctx, 1, q)
	})
	for n := range 5 {
		if teams[n].CompanyID != 1 || integrations[n].CompanyID != 1 || projects[n].CompanyID != 1 || policies[n].CompanyID != 1 || rules[n].CompanyID != 1 {
			t.Fatalf("row %d of another company: %+v %+v %+v %+v %+v", n, teams[n], integrations[n], projects[n], policies[n], rules[n])
		}
	}
	// A token opens its company's list only.
	first, err := st.Catalog.ListProjects(ctx, 1, page.Request{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Catalog.ListProjects(ctx, 2, page.Request{Limit: 2, Token: first.Next}); err == nil {
		t.Fatal("company 2 opened company 1's token")
	}
}

func second[T any](_ T, err error) error { return err }

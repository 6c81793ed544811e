package tenancy_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// TestListsPage reads each of the area's lists in pages of two, by token
// and by number: users and keys with the company's totals, companies and
// the audit log uncounted.
func TestListsPage(t *testing.T) {
	t.Parallel()
	st, _ := newArea(t)
	ctx := ledger.WithAuditActor(context.Background(), ledger.AuditActor{Via: ledger.ViaOperator})
	var acme schema.Company
	for n := range 3 {
		name := fmt.Sprintf("co%d", n)
		c, admin, _, err := st.CreateCompany(ctx, tenancy.NewCompany{Name: name, Admin: schema.User{Email: "a@" + name + ".test", FirstName: "A", LastName: "B"}, APIKey: "csk_test-" + name})
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			continue
		}
		acme = c
		for i := range 4 {
			if _, err := st.CreateUser(ctx, schema.User{CompanyID: c.ID, Email: fmt.Sprintf("u%d@%s.test", i, name), FirstName: "U", LastName: "V", Active: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.CreateAPIKey(ctx, schema.APIKey{CompanyID: c.ID, UserID: admin.ID, Name: "k"}, fmt.Sprintf("csk_test-%s-%d", name, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	users := testenv.Pages(t, 2, testenv.Total(5), func(q page.Request) (page.Page[schema.User], error) {
		return st.ListUsers(ctx, acme.ID, tenancy.FacetAll, q)
	})
	keys := testenv.Pages(t, 2, testenv.Total(5), func(q page.Request) (page.Page[schema.APIKey], error) {
		return st.ListAPIKeys(ctx, acme.ID, 0, q)
	})
	for n := range 5 {
		if users[n].CompanyID != acme.ID || keys[n].CompanyID != acme.ID {
			t.Fatalf("row %d of another company: %+v %+v", n, users[n], keys[n])
		}
	}
	if companies := testenv.Pages(t, 2, nil, func(q page.Request) (page.Page[schema.Company], error) { return st.ListCompanies(ctx, q) }); len(companies) != 3 {
		t.Fatalf("%d companies", len(companies))
	}
	// The company, its admin and first key, four users and four keys.
	if log := testenv.Pages(t, 2, nil, func(q page.Request) (page.Page[tenancy.AuditRecord], error) {
		return st.ListAudit(ctx, acme.ID, tenancy.AuditFilter{}, q)
	}); len(log) < 9 {
		t.Fatalf("%d audit entries", len(log))
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

type companyJSON struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Active    bool   `json:"active"`
	CreatedAt string `json:"created_at,omitempty"`
}

func companyView(c schema.Company) companyJSON {
	return companyJSON{ID: c.ID, Name: c.Name, Active: c.Active(), CreatedAt: c.CreatedAt}
}

type adminJSON struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
}

// company reads the company the --company flag names (checked by then).
func company(ctx context.Context, st *store.Store, f *idFlag) (schema.Company, error) {
	c, err := st.Tenancy.GetCompany(ctx, f.id)
	if errors.Is(err, ddb.ErrNotFound) {
		return c, fmt.Errorf("%w: no company %d", errNotFound, f.id)
	}
	return c, err
}

func createCompany() command {
	fs := newCommand("create-company")
	name := fs.String("name", "", "company name (unique, ignoring case; NFC-normalized)")
	email := fs.String("admin-email", "", "first admin's email (a plain address)")
	fullName := fs.String("admin-name", "", `first admin's name ("First Last")`)
	newKey := fs.Bool("new-key", false, "for an existing company: mint another key for the admin with --admin-email")
	var in tenancy.NewCompany
	check := func() (err error) {
		in, err = newCompany(*name, *email, *fullName)
		return err
	}
	return command{name: "create-company", flags: fs, check: check, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		key := auth.NewAPIKey()
		in.APIKey = key
		c, admin, created, err := st.Tenancy.CreateCompany(ctx, in)
		if err != nil {
			return err
		}
		res := map[string]any{"created": created, "company": companyView(c)}
		switch {
		case created:
			res["admin"], res["api_key"] = adminJSON{admin.ID, admin.Email}, key
		case *newKey:
			admin, err := st.Tenancy.UserByEmail(ctx, c.ID, in.Admin.Email)
			if errors.Is(err, ddb.ErrNotFound) {
				return fmt.Errorf("%w: company %d has no user %s", errNotFound, c.ID, in.Admin.Email)
			}
			if err != nil {
				return err
			}
			if !admin.Active || !admin.IsAdmin {
				return fmt.Errorf("user %s of company %d is not an active admin", in.Admin.Email, c.ID)
			}
			if _, err := st.Tenancy.CreateAPIKey(ctx, schema.APIKey{CompanyID: c.ID, UserID: admin.ID, Name: "operator-issued key"}, key); err != nil {
				return err
			}
			res["admin"], res["api_key"] = adminJSON{admin.ID, admin.Email}, key
		}
		return printJSON(out, res)
	}}
}

func listCompanies() command {
	fs := newCommand("list-companies")
	return command{name: "list-companies", flags: fs, check: noCheck, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		list := []companyJSON{}
		q := storepage.Request{Limit: 100}
		for {
			listed, err := st.Tenancy.ListCompanies(ctx, q)
			page, res := listed.Items, listed
			if err != nil {
				return err
			}
			for _, c := range page {
				list = append(list, companyView(c))
			}
			if res.Next == "" {
				return printJSON(out, list)
			}
			q.Token = res.Next
		}
	}}
}

func setActive(active bool) command {
	name := map[bool]string{true: "reactivate-company", false: "deactivate-company"}[active]
	fs := newCommand(name)
	id := requireID(fs, "company", "company id")
	return command{name: name, flags: fs, check: id.check, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		companyID := id.id
		c, changed, err := st.Tenancy.SetCompanyActive(ctx, companyID, active)
		if errors.Is(err, ddb.ErrNotFound) {
			return fmt.Errorf("%w: no company %d", errNotFound, companyID)
		}
		if err != nil {
			return err
		}
		return printJSON(out, map[string]any{"changed": changed, "company": companyView(c)})
	}}
}

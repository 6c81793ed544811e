package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/store"
)

type companyJSON struct {
	ID        int64  `json:"id"`
	Name      string `json:"name"`
	Active    bool   `json:"active"`
	CreatedAt string `json:"created_at,omitempty"`
}

func companyView(c store.Company) companyJSON {
	return companyJSON{ID: c.ID, Name: c.Name, Active: c.Active(), CreatedAt: c.CreatedAt}
}

type adminJSON struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
}

// company reads the company the --company flag names.
func company(ctx context.Context, st *store.Store, f idFlag) (store.Company, error) {
	id, err := f.get()
	if err != nil {
		return store.Company{}, err
	}
	c, err := st.GetCompany(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return c, fmt.Errorf("%w: no company %d", errNotFound, id)
	}
	return c, err
}

func createCompany() command {
	fs := newCommand("create-company")
	name := fs.String("name", "", "company name (unique, ignoring case)")
	email := fs.String("admin-email", "", "first admin's email")
	fullName := fs.String("admin-name", "", `first admin's name ("First Last")`)
	newKey := fs.Bool("new-key", false, "for an existing company: mint another key for the admin with --admin-email")
	return command{name: "create-company", flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		*name, *email, *fullName = strings.TrimSpace(*name), strings.TrimSpace(*email), strings.TrimSpace(*fullName)
		if *name == "" || *email == "" || *fullName == "" {
			return fmt.Errorf("%w: --name, --admin-email and --admin-name are required", errUsage)
		}
		first, last, _ := strings.Cut(*fullName, " ")
		key := auth.NewAPIKey()
		c, admin, created, err := st.CreateCompany(ctx, store.NewCompany{
			Name:   *name,
			Admin:  store.User{Email: *email, FirstName: first, LastName: strings.TrimSpace(last)},
			APIKey: key,
		})
		if err != nil {
			return err
		}
		res := map[string]any{"created": created, "company": companyView(c)}
		switch {
		case created:
			res["admin"], res["api_key"] = adminJSON{admin.ID, admin.Email}, key
		case *newKey:
			admin, err := st.UserByEmail(ctx, c.ID, *email)
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("%w: company %d has no user %s", errNotFound, c.ID, *email)
			}
			if err != nil {
				return err
			}
			if !admin.Active || !admin.IsAdmin {
				return fmt.Errorf("user %s of company %d is not an active admin", *email, c.ID)
			}
			if _, err := st.CreateAPIKey(ctx, store.APIKey{CompanyID: c.ID, UserID: admin.ID, Name: "operator-issued key"}, key); err != nil {
				return err
			}
			res["admin"], res["api_key"] = adminJSON{admin.ID, admin.Email}, key
		}
		return printJSON(out, res)
	}}
}

func listCompanies() command {
	fs := newCommand("list-companies")
	return command{name: "list-companies", flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		list := []companyJSON{}
		q := store.PageQuery{Limit: 100}
		for {
			page, res, err := st.ListCompanies(ctx, q)
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
	return command{name: name, flags: fs, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		companyID, err := id.get()
		if err != nil {
			return err
		}
		c, changed, err := st.SetCompanyActive(ctx, companyID, active)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: no company %d", errNotFound, companyID)
		}
		if err != nil {
			return err
		}
		return printJSON(out, map[string]any{"changed": changed, "company": companyView(c)})
	}}
}

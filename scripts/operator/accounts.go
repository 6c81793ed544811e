package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

type userJSON struct {
	ID          int64    `json:"id"`
	Email       string   `json:"email"`
	FirstName   string   `json:"first_name"`
	LastName    string   `json:"last_name"`
	IsAdmin     bool     `json:"is_admin"`
	Active      bool     `json:"active"`
	Permissions []string `json:"permissions"`
	CreatedAt   string   `json:"created_at,omitempty"`
}

// keyJSON is a key as lists show it: never its secret or its hash.
type keyJSON struct {
	ID         int64  `json:"id"`
	UserID     int64  `json:"user_id"`
	Name       string `json:"name"`
	Prefix     string `json:"prefix"`
	CreatedAt  string `json:"created_at"`
	LastUsedAt string `json:"last_used_at,omitempty"`
	ExpiresAt  string `json:"expires_at,omitempty"`
	RevokedAt  string `json:"revoked_at,omitempty"`
}

func keyView(k schema.APIKey) keyJSON {
	return keyJSON{ID: k.ID, UserID: k.UserID, Name: k.Name, Prefix: k.Prefix, CreatedAt: k.CreatedAt,
		LastUsedAt: k.LastUsedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt}
}

func listUsers() command {
	fs := newCommand("list-users")
	id := requireID(fs, "company", "company id")
	return command{name: "list-users", flags: fs, check: id.check, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		c, err := company(ctx, st, id)
		if err != nil {
			return err
		}
		users, err := st.Tenancy.AllUsers(ctx, c.ID)
		if err != nil {
			return err
		}
		list := make([]userJSON, 0, len(users))
		for _, u := range users {
			perms := u.Permissions
			if perms == nil {
				perms = []string{}
			}
			list = append(list, userJSON{ID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName,
				IsAdmin: u.IsAdmin, Active: u.Active, Permissions: perms, CreatedAt: u.CreatedAt})
		}
		if err := st.Ledger.Audit(ctx, c.ID, ledger.AuditEntry{Action: "user.list", TargetType: "company", TargetID: strconv.FormatInt(c.ID, 10)}); err != nil {
			return err
		}
		return printJSON(out, list)
	}}
}

func listKeys() command {
	fs := newCommand("list-keys")
	id := requireID(fs, "company", "company id")
	uid := optionalID(fs, "user", "only this user's keys")
	check := func() error { return firstError(id.check, uid.check) }
	return command{name: "list-keys", flags: fs, check: check, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		c, err := company(ctx, st, id)
		if err != nil {
			return err
		}
		userID := uid.id
		target, targetID := "company", c.ID
		if userID != 0 {
			if _, err := user(ctx, st, c.ID, userID); err != nil {
				return err
			}
			target, targetID = "user", userID
		}
		list := []keyJSON{}
		q := storepage.Request{Limit: 100}
		for {
			listed, err := st.Tenancy.ListAPIKeys(ctx, c.ID, userID, q)
			page, res := listed.Items, listed
			if err != nil {
				return err
			}
			for _, k := range page {
				list = append(list, keyView(k))
			}
			if res.Next == "" {
				break
			}
			q.Token = res.Next
		}
		if err := st.Ledger.Audit(ctx, c.ID, ledger.AuditEntry{Action: "api_key.list", TargetType: target, TargetID: strconv.FormatInt(targetID, 10)}); err != nil {
			return err
		}
		return printJSON(out, list)
	}}
}

// user reads a user of a company, or errNotFound.
func user(ctx context.Context, st *store.Store, companyID, userID int64) (schema.User, error) {
	u, err := st.Tenancy.GetUser(ctx, companyID, userID)
	if errors.Is(err, ddb.ErrNotFound) {
		return u, fmt.Errorf("%w: company %d has no user %d", errNotFound, companyID, userID)
	}
	return u, err
}

func mintKey() command {
	fs := newCommand("mint-key")
	id := requireID(fs, "company", "company id")
	uid := requireID(fs, "user", "id of the user the key authenticates as")
	rawName := fs.String("name", "operator-issued key", "the key's name")
	rawDays := fs.String("expires-in-days", "0", "days until the key expires (0: never)")
	var name string
	var days int
	check := func() error {
		return firstError(id.check, uid.check, func() (err error) {
			name, err = cleantext.Name("--name", *rawName, accounts.MaxKeyNameLength)
			return err
		}, func() (err error) {
			days, err = keyLife(*rawDays)
			return err
		})
	}
	return command{name: "mint-key", flags: fs, check: check, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		c, err := company(ctx, st, id)
		if err != nil {
			return err
		}
		userID := uid.id
		u, err := user(ctx, st, c.ID, userID)
		if err != nil {
			return err
		}
		if !u.Active {
			return fmt.Errorf("user %d of company %d is inactive: a key of theirs would not authenticate", userID, c.ID)
		}
		k := schema.APIKey{CompanyID: c.ID, UserID: u.ID, Name: name}
		if days > 0 {
			k.ExpiresAt = time.Now().UTC().Add(time.Duration(days) * 24 * time.Hour).Format(time.RFC3339)
		}
		secret := auth.NewAPIKey()
		k, err = st.Tenancy.CreateAPIKey(ctx, k, secret)
		if err != nil {
			return err
		}
		return printJSON(out, map[string]any{"key": keyView(k), "api_key": secret})
	}}
}

func revokeKey() command {
	fs := newCommand("revoke-key")
	id := requireID(fs, "company", "company id")
	kid := requireID(fs, "key", "key id (list-keys shows it)")
	check := func() error { return firstError(id.check, kid.check) }
	return command{name: "revoke-key", flags: fs, check: check, run: func(ctx context.Context, st *store.Store, out io.Writer) error {
		c, err := company(ctx, st, id)
		if err != nil {
			return err
		}
		keyID := kid.id
		before, err := st.Tenancy.GetAPIKey(ctx, c.ID, keyID)
		if errors.Is(err, ddb.ErrNotFound) {
			return fmt.Errorf("%w: company %d has no key %d", errNotFound, c.ID, keyID)
		}
		if err != nil {
			return err
		}
		after, err := st.Tenancy.RevokeAPIKey(ctx, c.ID, keyID)
		if err != nil {
			return err
		}
		return printJSON(out, map[string]any{"changed": before.RevokedAt == "", "key": keyView(after)})
	}}
}

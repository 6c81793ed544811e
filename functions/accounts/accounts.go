// Package accounts governs a tenant from the inside: API keys (each user
// their own, company admins every key), users and their rights, and the
// audit log of every administrative change.
package accounts

import (
	"net/http"
	"time"

	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	storepage "github.com/acme/codescan-api/shared/store/page"
)

// List limits.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

type handlers struct {
	store Store
	now   func() time.Time
}

// New returns the group's http.Handler.
func New(d config.Deps) http.Handler {
	h := handlers{store: d.Store.Tenancy, now: d.Clock()}
	return d.Server.Group(routes.GroupAccounts, map[string]httpapi.HandlerFunc{
		"POST /api-keys":            h.createKey,
		"GET /api-keys":             h.listKeys,
		"DELETE /api-keys/{key_id}": h.revokeKey,
		"GET /users":                h.listUsers,
		"POST /users":               h.createUser,
		"PATCH /users/{user_id}":    h.updateUser,
		"GET /audit-log":            h.listAudit,
	})
}

// pageRequest reads page, page_size and next_page_token (or page_token).
// A token wins over a page number; page numbers cost a keys-only read of
// the rows before.
func pageRequest(r *http.Request) (storepage.Request, httpapi.Paging, error) {
	pg, err := httpapi.ParsePaging(r, DefaultPageSize, MaxPageSize)
	if err != nil {
		return storepage.Request{}, pg, err
	}
	return pg.Query(), pg, nil
}

// withNullNext is l answering next_page_token as null on the last page,
// as every list of the group does.
func withNullNext(l httpapi.List) httpapi.List {
	l.NullNext = true
	return l
}

// nullable is s, or JSON null when empty.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

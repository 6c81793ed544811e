package accounts

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/ddb"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// Limits of a user's fields.
const (
	MaxEmailLength   = 254
	MaxNameLength    = 100
	MaxSubjectLength = 255
)

func (h handlers) listUsers(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	pr, pg, err := pageRequest(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	role, perm := q.Get("role"), q.Get("permission")
	facet := tenancy.FacetAll
	switch {
	case role != "" && perm != "":
		return httpapi.Invalid("Filter by role or by permission, not both")
	case role == "admin":
		facet = tenancy.FacetAdmin
	case role == "member":
		facet = tenancy.FacetMember
	case role != "":
		return httpapi.Invalid("role must be admin or member")
	case perm != "":
		if !slices.Contains(routes.AllPermissions, perm) {
			return httpapi.Invalid("Unknown permission")
		}
		facet = tenancy.FacetPermission(perm)
	}
	users, err := h.store.ListUsers(r.Context(), p.CompanyID, facet, pr)
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, withNullNext(httpapi.Numbered("users", "total_users")), storepage.Map(users, userView))
}

type createUserRequest struct {
	Email       *string  `json:"email"`
	FirstName   *string  `json:"first_name"`
	LastName    *string  `json:"last_name"`
	Permissions []string `json:"permissions"`
	IsAdmin     bool     `json:"is_admin"`
	Subject     *string  `json:"subject"`
}

func (h handlers) createUser(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	var req createUserRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	u := schema.User{CompanyID: p.CompanyID, IsAdmin: req.IsAdmin, Active: true}
	var err error
	if u.Email, err = cleantext.Email("email", deref(req.Email), MaxEmailLength); err != nil {
		return err
	}
	if u.FirstName, err = cleantext.Name("first_name", deref(req.FirstName), MaxNameLength); err != nil {
		return err
	}
	if u.LastName, err = cleantext.Name("last_name", deref(req.LastName), MaxNameLength); err != nil {
		return err
	}
	if u.Permissions, err = permissions(req.Permissions); err != nil {
		return err
	}
	if req.Subject != nil {
		if u.Subject, err = cleantext.Name("subject", *req.Subject, MaxSubjectLength); err != nil {
			return err
		}
	}
	created, err := h.store.CreateUser(r.Context(), u)
	switch {
	case errors.Is(err, tenancy.ErrEmailTaken):
		return httpapi.Conflict("A user with this email already exists")
	case errors.Is(err, tenancy.ErrSubjectTaken):
		return httpapi.Conflict("This subject is already mapped to a user")
	case err != nil:
		return err
	}
	return httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"status": "ok", "user": userView(created)})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// permissions checks names against routes.AllPermissions and returns them
// sorted without duplicates.
func permissions(in []string) ([]string, error) {
	for _, p := range in {
		if !slices.Contains(routes.AllPermissions, p) {
			return nil, httpapi.Invalid("Unknown permission; known: %s", strings.Join(routes.AllPermissions, ", "))
		}
	}
	out := slices.Sorted(slices.Values(in))
	return slices.Compact(out), nil
}

type updateUserRequest struct {
	Permissions *[]string `json:"permissions"`
	IsAdmin     *bool     `json:"is_admin"`
	Active      *bool     `json:"active"`
	// SCMLogin links the user's login on the source-code host (null
	// unlinks): pull-request commands by that login act as the user.
	SCMLogin json.RawMessage `json:"scm_login"`
}

var errLoginTaken = httpapi.Conflict("Another user of the company is linked to this scm_login")

var errLastAdmin = httpapi.Conflict("The company's last active admin cannot be demoted or deactivated")

func (h handlers) updateUser(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	id, err := httpapi.PathInt(r, "user_id")
	if err != nil {
		return err
	}
	var req updateUserRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.Permissions == nil && req.IsAdmin == nil && req.Active == nil && req.SCMLogin == nil {
		return httpapi.Invalid("Give at least one of permissions, is_admin, active, scm_login")
	}
	ch := tenancy.UserChange{IsAdmin: req.IsAdmin, Active: req.Active}
	if req.Permissions != nil {
		perms, err := permissions(*req.Permissions)
		if err != nil {
			return err
		}
		ch.Permissions = &perms
	}
	if ch.SCMLogin, err = scmLogin(req.SCMLogin); err != nil {
		return err
	}
	// One transaction and one audit entry for every member, the login's
	// look-up item included.
	_, after, err := h.store.UpdateUser(r.Context(), p.CompanyID, id, ch)
	switch {
	case errors.Is(err, ddb.ErrNotFound):
		return errUserNotFound
	case errors.Is(err, tenancy.ErrLastAdmin):
		return errLastAdmin
	case errors.Is(err, tenancy.ErrSCMLoginTaken):
		return errLoginTaken
	case err != nil:
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "user": userView(after)})
}

// scmLogin reads scm_login: nil when absent, "" for null (unlink), else
// the login in its canonical form. A login another user of the company
// holds is refused by the update's transaction (tenancy.ErrSCMLoginTaken),
// which then writes nothing.
func scmLogin(raw json.RawMessage) (*string, error) {
	if raw == nil {
		return nil, nil
	}
	login := ""
	if string(raw) != "null" {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, httpapi.Invalid("scm_login must be a string or null")
		}
		l, ok := prtriage.CanonicalLogin(s)
		if !ok {
			return nil, httpapi.Invalid("scm_login must be a host login: 1 to 64 letters, digits, hyphens, underscores or dots, starting with a letter or digit and not ending with a dot")
		}
		login = l
	}
	return &login, nil
}

type userJSON struct {
	ID          int64    `json:"id"`
	Email       string   `json:"email"`
	FirstName   string   `json:"first_name"`
	LastName    string   `json:"last_name"`
	Permissions []string `json:"permissions"`
	IsAdmin     bool     `json:"is_admin"`
	Active      bool     `json:"active"`
	Subject     any      `json:"subject"`
	SCMLogin    any      `json:"scm_login"`
	CreatedAt   any      `json:"created_at"`
	UpdatedAt   any      `json:"updated_at"`
}

func userView(u schema.User) userJSON {
	return userJSON{
		ID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName,
		Permissions: httpapi.Array(u.Permissions), IsAdmin: u.IsAdmin, Active: u.Active,
		Subject: nullable(u.Subject), SCMLogin: nullable(u.SCMLogin), CreatedAt: nullable(u.CreatedAt), UpdatedAt: nullable(u.UpdatedAt),
	}
}

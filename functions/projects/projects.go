// Package projects serves what the command-line client and the IDE
// extension call around a scan: the account check, projects, scans and
// their status, reports, and the CI gate over blocking rules.
package projects

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/ddb"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Page sizes: the client asks for 50 projects and 30 scans a page.
const (
	DefaultProjectPageSize = 20
	DefaultScanPageSize    = 30
	MaxPageSize            = 100
	maxNameLen             = 255 // branch names
)

type handlers struct {
	store Store
}

// New returns the group's http.Handler.
func New(d config.Deps) http.Handler {
	h := handlers{store: StoreOf(d.Store)}
	return d.Server.Group(routes.GroupProjects, map[string]httpapi.HandlerFunc{
		"GET /verify":                              h.verify,
		"GET /verify/{token}":                      h.verifyLegacy,
		"GET /projects":                            h.listProjects,
		"PATCH /projects/{project_id}":             h.patchProject,
		"GET /scans":                               h.listScans,
		"GET /scan/{scan_id}":                      h.getScan,
		"GET /scan/{scan_id}/report":               h.report,
		"GET /scan/{scan_id}/check_blocking_rules": h.checkBlockingRules,
	})
}

// verify answers {"status":"ok"}: every value a string, as the client
// parses a string map. With user_info=true it adds the caller.
func (h handlers) verify(w http.ResponseWriter, r *http.Request) error {
	withUser, err := httpapi.BoolParam(r, "user_info")
	if err != nil {
		return err
	}
	if !withUser {
		return httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
	p := auth.FromContext(r.Context())
	u, err := h.store.Tenancy.GetUser(r.Context(), p.CompanyID, p.UserID)
	if err != nil {
		return err
	}
	c, err := h.store.Tenancy.GetCompany(r.Context(), p.CompanyID)
	if err != nil {
		return err
	}
	type company struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	type user struct {
		ID      int64   `json:"id"`
		Email   string  `json:"email"`
		Name    string  `json:"name"`
		Company company `json:"company"`
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "user": user{
		ID: u.ID, Email: u.Email, Name: strings.TrimSpace(u.FirstName + " " + u.LastName),
		Company: company{ID: c.ID, Name: c.Name},
	}})
}

// verifyLegacy is the IDE's GET /verify/{token}?url=…: the key is the path
// segment (the route table's PathToken access authenticated it).
func (h handlers) verifyLegacy(w http.ResponseWriter, r *http.Request) error {
	return httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

type projectJSON struct {
	ID            int64   `json:"id"`
	Name          string  `json:"name"`
	RepoURL       *string `json:"repo_url"`
	DefaultBranch *string `json:"default_branch"`
}

// projectView is the API form of a project; without a default branch set,
// the branch of its first scan stands for it (null before any scan).
func (h handlers) projectView(ctx context.Context, p schema.Project) (projectJSON, error) {
	v := projectJSON{ID: p.ID, Name: p.Name}
	if p.RepoURL != "" {
		v.RepoURL = &p.RepoURL
	}
	branch := p.DefaultBranch
	if branch == "" {
		b, err := h.store.Scans.FirstScanBranch(ctx, p.CompanyID, p.ID)
		if err != nil && !errors.Is(err, ddb.ErrNotFound) {
			return v, err
		}
		branch = b
	}
	if branch != "" {
		v.DefaultBranch = &branch
	}
	return v, nil
}

// listProjects pages the company's projects by id. repo_url keeps the
// projects whose canonical repository URL contains it, ignoring case (the
// client sends a lower-cased "org/repo"): a filter of the store's query,
// paged by number or by token as the whole list is.
func (h handlers) listProjects(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	company := auth.FromContext(ctx).CompanyID
	pg, err := httpapi.ParsePaging(r, DefaultProjectPageSize, MaxPageSize)
	if err != nil {
		return err
	}
	var page storepage.Page[schema.Project]
	if repo := strings.TrimSpace(r.URL.Query().Get("repo_url")); repo != "" {
		page, err = h.store.Catalog.ListProjectsByRepo(ctx, company, repo, pg.Query())
	} else {
		page, err = h.store.Catalog.ListProjects(ctx, company, pg.Query())
	}
	if err != nil {
		return err
	}
	out := storepage.Page[projectJSON]{Items: make([]projectJSON, 0, len(page.Items)), Offset: page.Offset, Next: page.Next, Total: page.Total}
	for _, p := range page.Items {
		v, err := h.projectView(ctx, p)
		if err != nil {
			return err
		}
		out.Items = append(out.Items, v)
	}
	return httpapi.WriteList(w, pg, httpapi.Numbered("projects", "total_projects"), out)
}

var errProjectNotFound = httpapi.NotFound("Project not found")

// defaultBranch reads a default branch: cleantext's Line rule on the
// value without its surrounding spaces, 1 to maxNameLen characters. Only
// visible spaces are trimmed, never control characters: the gate compares
// the branch byte for byte with the branch a scan names, and trimming
// "main\r" (a CRLF line's tail) into "main" would accept text the rule
// refuses everywhere else; it is a 400 naming the character.
func defaultBranch(raw string) (string, error) {
	branch, err := cleantext.Line("default_branch", strings.TrimFunc(raw, visibleSpace))
	if err != nil {
		return "", err
	}
	if branch == "" || utf8.RuneCountInString(branch) > maxNameLen {
		return "", httpapi.Invalid("default_branch must hold 1 to %d characters", maxNameLen)
	}
	return branch, nil
}

// visibleSpace is white space that is not a control character (the space,
// no-break and typographic spaces).
func visibleSpace(r rune) bool { return unicode.IsSpace(r) && !unicode.IsControl(r) }

// patchProject sets a project's default branch.
func (h handlers) patchProject(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	company := auth.FromContext(ctx).CompanyID
	id, err := httpapi.PathInt(r, "project_id")
	if err != nil {
		return err
	}
	var req struct {
		DefaultBranch *string `json:"default_branch"`
	}
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	if req.DefaultBranch == nil {
		return httpapi.Invalid("default_branch is required")
	}
	branch, err := defaultBranch(*req.DefaultBranch)
	if err != nil {
		return err
	}
	p, err := h.store.Catalog.SetDefaultBranch(ctx, company, id, branch)
	if errors.Is(err, ddb.ErrNotFound) {
		return errProjectNotFound
	}
	if err != nil {
		return err
	}
	v, err := h.projectView(ctx, p)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "project": v})
}

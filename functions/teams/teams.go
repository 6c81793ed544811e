// Package teams creates and reads teams: named groups of users and the
// projects they cover, through explicit project ids and through selectors
// (project tags, repository URL fragments) resolved on every read.
package teams

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/sync/errgroup"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/ddb"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Limits of a team's fields and of the list.
const (
	MaxNameLength     = 100 // characters, after trimming
	MaxIDs            = 500 // member_ids, project_ids (each)
	MaxSelectors      = 100 // project_tags, repo_url_patterns (each)
	MaxSelectorLength = 200 // characters of one tag or pattern
	DefaultPageSize   = 20
	MaxPageSize       = 100
)

type handlers struct{ store Store }

// New returns the group's http.Handler.
func New(d config.Deps) http.Handler {
	h := handlers{store: StoreOf(d.Store)}
	return d.Server.Group(routes.GroupTeams, map[string]httpapi.HandlerFunc{
		"POST /teams":          h.create,
		"GET /teams":           h.list,
		"GET /teams/{team_id}": h.get,
	})
}

type createRequest struct {
	Name            *string  `json:"name"`
	MemberIDs       []int64  `json:"member_ids"`
	ProjectIDs      []int64  `json:"project_ids"`
	ProjectTags     []string `json:"project_tags"`
	RepoURLPatterns []string `json:"repo_url_patterns"`
}

func (h handlers) create(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	var req createRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	t, err := validate(req)
	if err != nil {
		return err
	}
	t.CompanyID = p.CompanyID
	dir := newDirectory(r.Context(), h.store, p.CompanyID)
	if err := dir.checkIDs(t); err != nil {
		return err
	}
	created, err := h.store.Catalog.CreateTeam(r.Context(), t)
	if errors.Is(err, ddb.ErrConflict) {
		existing, err := h.store.Catalog.TeamByName(r.Context(), p.CompanyID, t.Name)
		if err != nil {
			return err
		}
		view, err := dir.view(existing)
		if err != nil {
			return err
		}
		return &httpapi.Error{Status: http.StatusConflict, Body: conflict{
			Error: fmt.Sprintf("A team named %q already exists", existing.Name), Team: view,
		}}
	}
	if err != nil {
		return err
	}
	view, err := dir.view(created)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusCreated, map[string]any{"team": view})
}

type conflict struct {
	Error string   `json:"error"`
	Team  teamJSON `json:"team"`
}

// validate checks the body's values and returns the team to create, with
// the name trimmed, ids sorted without duplicates and selectors trimmed
// without (case-insensitive) duplicates.
func validate(req createRequest) (schema.Team, error) {
	if req.Name == nil || strings.TrimSpace(*req.Name) == "" {
		return schema.Team{}, httpapi.Invalid("name is required")
	}
	name, err := cleantext.Line("name", strings.TrimSpace(*req.Name))
	if err != nil {
		return schema.Team{}, err
	}
	if utf8.RuneCountInString(name) > MaxNameLength {
		return schema.Team{}, httpapi.Invalid("name is longer than %d characters", MaxNameLength)
	}
	t := schema.Team{Name: name}
	if t.MemberIDs, err = ids("member_ids", req.MemberIDs); err != nil {
		return schema.Team{}, err
	}
	if t.ProjectIDs, err = ids("project_ids", req.ProjectIDs); err != nil {
		return schema.Team{}, err
	}
	if t.ProjectTags, err = selectors("project_tags", req.ProjectTags); err != nil {
		return schema.Team{}, err
	}
	if t.RepoURLPatterns, err = selectors("repo_url_patterns", req.RepoURLPatterns); err != nil {
		return schema.Team{}, err
	}
	return t, nil
}

func ids(field string, in []int64) ([]int64, error) {
	if len(in) > MaxIDs {
		return nil, httpapi.Invalid("%s may hold at most %d ids", field, MaxIDs)
	}
	if err := httpapi.CheckIDs(field, in); err != nil {
		return nil, err
	}
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out), nil
}

func selectors(field string, in []string) ([]string, error) {
	if len(in) > MaxSelectors {
		return nil, httpapi.Invalid("%s may hold at most %d entries", field, MaxSelectors)
	}
	var out []string
	for _, s := range in {
		s, err := cleantext.Line(field, strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		switch {
		case s == "" || utf8.RuneCountInString(s) > MaxSelectorLength:
			return nil, httpapi.Invalid("%s entries must hold 1 to %d characters", field, MaxSelectorLength)
		case !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, s) }):
			out = append(out, s)
		}
	}
	return out, nil
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	pg, err := httpapi.ParsePaging(r, DefaultPageSize, MaxPageSize)
	if err != nil {
		return err
	}
	page, err := h.store.Catalog.ListTeams(r.Context(), p.CompanyID, pg.Query())
	if err != nil {
		return err
	}
	views, err := newDirectory(r.Context(), h.store, p.CompanyID).views(page.Items)
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, httpapi.Numbered("teams", "total_teams"),
		storepage.Page[teamJSON]{Items: views, Offset: page.Offset, Next: page.Next, Total: page.Total})
}

var errTeamNotFound = httpapi.NotFound("Team not found")

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	id, err := httpapi.PathInt(r, "team_id")
	if err != nil {
		return err
	}
	t, err := h.store.Catalog.GetTeam(r.Context(), p.CompanyID, id)
	if errors.Is(err, ddb.ErrNotFound) {
		return errTeamNotFound
	}
	if err != nil {
		return err
	}
	view, err := newDirectory(r.Context(), h.store, p.CompanyID).view(t)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"status": "ok", "team": view})
}

// directory reads what the teams of one answer need, by key: their
// members, and the ids a new team names.
type directory struct {
	ctx       context.Context
	store     Store
	companyID int64
}

func newDirectory(ctx context.Context, st Store, companyID int64) *directory {
	return &directory{ctx: ctx, store: st, companyID: companyID}
}

// checkIDs answers 400 naming every member or project id that is not the
// company's.
func (d *directory) checkIDs(t schema.Team) error {
	var users map[int64]schema.User
	var projects map[int64]schema.Project
	g, ctx := errgroup.WithContext(d.ctx)
	g.Go(func() (err error) {
		users, err = d.store.Tenancy.UsersByID(ctx, d.companyID, t.MemberIDs)
		return err
	})
	g.Go(func() (err error) {
		projects, err = d.store.Catalog.ProjectsByID(ctx, d.companyID, t.ProjectIDs)
		return err
	})
	if err := g.Wait(); err != nil {
		return err
	}
	var problems []string
	if bad := unknown(t.MemberIDs, func(id int64) bool { _, ok := users[id]; return ok }); bad != "" {
		problems = append(problems, "Unknown member_ids: "+bad)
	}
	if bad := unknown(t.ProjectIDs, func(id int64) bool { _, ok := projects[id]; return ok }); bad != "" {
		problems = append(problems, "Unknown project_ids: "+bad)
	}
	if len(problems) > 0 {
		return httpapi.Invalid("%s", strings.Join(problems, "; "))
	}
	return nil
}

func unknown(ids []int64, known func(int64) bool) string {
	var bad []string
	for _, id := range ids {
		if !known(id) {
			bad = append(bad, fmt.Sprint(id))
		}
	}
	return strings.Join(bad, ", ")
}

type memberJSON struct {
	ID        int64  `json:"id"`
	Email     string `json:"email"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

type teamJSON struct {
	ID              int64        `json:"id"`
	Name            string       `json:"name"`
	Active          bool         `json:"active"`
	Members         []memberJSON `json:"members"`
	ProjectIDs      []int64      `json:"project_ids"`
	ProjectTags     []string     `json:"project_tags"`
	RepoURLPatterns []string     `json:"repo_url_patterns"`
	ProjectCount    int          `json:"project_count"`
	CreatedAt       string       `json:"created_at"`
	UpdatedAt       string       `json:"updated_at"`
}

// view is the API form of a team.
func (d *directory) view(t schema.Team) (teamJSON, error) {
	v, err := d.views([]schema.Team{t})
	if err != nil {
		return teamJSON{}, err
	}
	return v[0], nil
}

// views are the API form of teams: members with their current names (one
// read by key of the teams' members), and the number of the company's
// projects each team covers (kept on the team).
func (d *directory) views(teams []schema.Team) ([]teamJSON, error) {
	var ids []int64
	for _, t := range teams {
		ids = append(ids, t.MemberIDs...)
	}
	users, err := d.store.Tenancy.UsersByID(d.ctx, d.companyID, ids)
	if err != nil {
		return nil, err
	}
	out := make([]teamJSON, 0, len(teams))
	for _, t := range teams {
		v := teamJSON{
			ID: t.ID, Name: t.Name, Active: t.Active, Members: []memberJSON{},
			ProjectIDs: httpapi.Array(t.ProjectIDs), ProjectTags: httpapi.Array(t.ProjectTags),
			RepoURLPatterns: httpapi.Array(t.RepoURLPatterns), ProjectCount: t.ProjectCount,
			CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		}
		for _, id := range t.MemberIDs {
			if u, ok := users[id]; ok {
				v.Members = append(v.Members, memberJSON{ID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName})
			}
		}
		out = append(out, v)
	}
	return out, nil
}

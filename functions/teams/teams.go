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

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
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

type handlers struct{ store *store.Store }

// New returns the group's http.Handler.
func New(d config.Deps) http.Handler {
	h := handlers{store: d.Store}
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
	created, err := h.store.CreateTeam(r.Context(), t)
	if errors.Is(err, store.ErrConflict) {
		existing, err := h.store.TeamByName(r.Context(), p.CompanyID, t.Name)
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
func validate(req createRequest) (store.Team, error) {
	if req.Name == nil || strings.TrimSpace(*req.Name) == "" {
		return store.Team{}, httpapi.Errorf(http.StatusBadRequest, "name is required")
	}
	name, err := cleantext.Line("name", strings.TrimSpace(*req.Name))
	if err != nil {
		return store.Team{}, err
	}
	if utf8.RuneCountInString(name) > MaxNameLength {
		return store.Team{}, httpapi.Errorf(http.StatusBadRequest, "name must be at most %d characters", MaxNameLength)
	}
	t := store.Team{Name: name}
	if t.MemberIDs, err = ids("member_ids", req.MemberIDs); err != nil {
		return store.Team{}, err
	}
	if t.ProjectIDs, err = ids("project_ids", req.ProjectIDs); err != nil {
		return store.Team{}, err
	}
	if t.ProjectTags, err = selectors("project_tags", req.ProjectTags); err != nil {
		return store.Team{}, err
	}
	if t.RepoURLPatterns, err = selectors("repo_url_patterns", req.RepoURLPatterns); err != nil {
		return store.Team{}, err
	}
	return t, nil
}

func ids(field string, in []int64) ([]int64, error) {
	if len(in) > MaxIDs {
		return nil, httpapi.Errorf(http.StatusBadRequest, "%s may hold at most %d ids", field, MaxIDs)
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
		return nil, httpapi.Errorf(http.StatusBadRequest, "%s may hold at most %d entries", field, MaxSelectors)
	}
	var out []string
	for _, s := range in {
		s, err := cleantext.Line(field, strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		switch {
		case s == "":
			return nil, httpapi.Errorf(http.StatusBadRequest, "%s entries must not be empty", field)
		case utf8.RuneCountInString(s) > MaxSelectorLength:
			return nil, httpapi.Errorf(http.StatusBadRequest, "%s entries must be at most %d characters", field, MaxSelectorLength)
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
	all, err := h.store.ListTeams(r.Context(), p.CompanyID)
	if err != nil {
		return err
	}
	page := httpapi.Slice(pg, all)
	dir := newDirectory(r.Context(), h.store, p.CompanyID)
	views := make([]teamJSON, 0, len(page))
	for _, t := range page {
		v, err := dir.view(t)
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"status": "ok", "page": pg.Page, "page_size": pg.PageSize,
		"total_pages": pg.TotalPages(len(all)), "total_teams": len(all), "teams": views,
	})
}

var errTeamNotFound = httpapi.Errorf(http.StatusNotFound, "Team not found")

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	id, err := httpapi.PathInt(r, "team_id")
	if err != nil {
		return err
	}
	t, err := h.store.GetTeam(r.Context(), p.CompanyID, id)
	if errors.Is(err, store.ErrNotFound) {
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

// directory loads the company's users and projects, each at most once per
// request and only when a team needs them.
type directory struct {
	ctx       context.Context
	store     *store.Store
	companyID int64
	users     map[int64]store.User
	projects  []store.Project // nil until loaded (then non-nil, maybe empty)
}

func newDirectory(ctx context.Context, st *store.Store, companyID int64) *directory {
	return &directory{ctx: ctx, store: st, companyID: companyID}
}

func (d *directory) userMap() (map[int64]store.User, error) {
	if d.users == nil {
		list, err := d.store.ListUsers(d.ctx, d.companyID)
		if err != nil {
			return nil, err
		}
		d.users = make(map[int64]store.User, len(list))
		for _, u := range list {
			d.users[u.ID] = u
		}
	}
	return d.users, nil
}

func (d *directory) projectList() ([]store.Project, error) {
	if d.projects == nil {
		list, err := d.store.ListProjects(d.ctx, d.companyID)
		if err != nil {
			return nil, err
		}
		d.projects = httpapi.Array(list)
	}
	return d.projects, nil
}

// checkIDs answers 400 naming every member or project id that is not the
// company's.
func (d *directory) checkIDs(t store.Team) error {
	var problems []string
	if len(t.MemberIDs) > 0 {
		users, err := d.userMap()
		if err != nil {
			return err
		}
		if bad := unknown(t.MemberIDs, func(id int64) bool { _, ok := users[id]; return ok }); bad != "" {
			problems = append(problems, "Unknown member_ids: "+bad)
		}
	}
	if len(t.ProjectIDs) > 0 {
		projects, err := d.projectList()
		if err != nil {
			return err
		}
		ids := make(map[int64]bool, len(projects))
		for _, p := range projects {
			ids[p.ID] = true
		}
		if bad := unknown(t.ProjectIDs, func(id int64) bool { return ids[id] }); bad != "" {
			problems = append(problems, "Unknown project_ids: "+bad)
		}
	}
	if len(problems) > 0 {
		return httpapi.Errorf(http.StatusBadRequest, "%s", strings.Join(problems, "; "))
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

// view is the API form of a team: members with their current names, and the
// number of the company's projects the team covers now.
func (d *directory) view(t store.Team) (teamJSON, error) {
	v := teamJSON{
		ID: t.ID, Name: t.Name, Active: t.Active, Members: []memberJSON{},
		ProjectIDs: httpapi.Array(t.ProjectIDs), ProjectTags: httpapi.Array(t.ProjectTags),
		RepoURLPatterns: httpapi.Array(t.RepoURLPatterns), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
	}
	if len(t.MemberIDs) > 0 {
		users, err := d.userMap()
		if err != nil {
			return teamJSON{}, err
		}
		for _, id := range t.MemberIDs {
			if u, ok := users[id]; ok {
				v.Members = append(v.Members, memberJSON{ID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName})
			}
		}
	}
	if len(t.ProjectIDs)+len(t.ProjectTags)+len(t.RepoURLPatterns) > 0 {
		projects, err := d.projectList()
		if err != nil {
			return teamJSON{}, err
		}
		v.ProjectCount = projectCount(t, projects)
	}
	return v, nil
}

// projectCount is the number of distinct projects a team covers: those it
// names by id, those carrying one of its tags (case-insensitive equality),
// and those whose repository URL contains one of its patterns
// (case-insensitive substring; a project without a URL matches none).
func projectCount(t store.Team, projects []store.Project) int {
	n := 0
	for _, p := range projects {
		byTag := slices.ContainsFunc(p.Tags, func(tag string) bool {
			return slices.ContainsFunc(t.ProjectTags, func(sel string) bool { return strings.EqualFold(tag, sel) })
		})
		url := strings.ToLower(p.RepoURL)
		byURL := url != "" && slices.ContainsFunc(t.RepoURLPatterns, func(sel string) bool {
			return strings.Contains(url, strings.ToLower(sel))
		})
		if slices.Contains(t.ProjectIDs, p.ID) || byTag || byURL {
			n++
		}
	}
	return n
}

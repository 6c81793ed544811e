// Package components serves the component inventory: GET /components
// answers which projects and branches of the company hold a package (any
// version, one version, or a range of versions compared by the package's
// ecosystem), with each holding's version, relation, licences and last
// scan, and the company-wide counts of the package. Its cost is that of
// the answer: the package's version directory, then its holders on the
// package index (docs/components.md).
package components

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/acme/codescan-api/shared/auth"
	comp "github.com/acme/codescan-api/shared/components"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	storecomponents "github.com/acme/codescan-api/shared/store/components"
	"github.com/acme/codescan-api/shared/store/page"
)

// Page sizes of the list, and the versions the summary names.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
	MaxVersions     = 100
)

type handlers struct{ store Store }

// New returns the group's http.Handler.
func New(d config.Deps) http.Handler {
	h := handlers{store: d.Store.Components}
	return d.Server.Group(routes.GroupComponents, map[string]httpapi.HandlerFunc{
		"GET /components": h.list,
	})
}

// boundParams are the version bound parameters and their comparisons.
var boundParams = []struct{ param, op string }{
	{"version_lt", comp.LT}, {"version_lte", comp.LTE}, {"version_gt", comp.GT}, {"version_gte", comp.GTE},
}

// query is a parsed request.
type query struct {
	purl   comp.PURL
	bounds comp.Range
	view   string // the bounds as text, for page tokens
}

// parse reads purl and the version bounds: 400 naming the field.
func parse(r *http.Request) (query, error) {
	v := r.URL.Query()
	raw := strings.TrimSpace(v.Get("purl"))
	if raw == "" {
		return query{}, httpapi.Invalid("purl is required (a package URL, for example pkg:npm/lodash or pkg:npm/lodash@4.17.20)")
	}
	p, err := comp.ParsePURL(raw)
	if err != nil {
		return query{}, httpapi.Invalid("purl: %s", err.Error())
	}
	q := query{purl: p}
	eco := p.Ecosystem()
	if p.Version != "" && eco != "" {
		if _, err := comp.ParseVersion(eco, p.Version); err != nil {
			return query{}, httpapi.Invalid("purl: %s", versionProblem(err, eco))
		}
	}
	var view []string
	for _, b := range boundParams {
		s := v.Get(b.param)
		if s == "" {
			continue
		}
		if eco == "" {
			return query{}, httpapi.Invalid("purl: package URL type %q has no known ecosystem, so %s cannot be compared", p.Type, b.param)
		}
		ver, err := comp.ParseVersion(eco, s)
		if err != nil {
			return query{}, httpapi.Invalid("%s: %s", b.param, versionProblem(err, eco))
		}
		q.bounds = append(q.bounds, comp.Bound{Op: b.op, Version: ver})
		view = append(view, b.op+"="+ver.String())
	}
	q.view = strings.Join(view, ";")
	return q, nil
}

func versionProblem(err error, eco string) string {
	if errors.Is(err, comp.ErrUnknownEcosystem) {
		return fmt.Sprintf("unknown ecosystem %q", eco)
	}
	return fmt.Sprintf("not a valid %s version (%s)", eco, strings.TrimPrefix(err.Error(), comp.ErrInvalidVersion.Error()+": "))
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	company := auth.FromContext(ctx).CompanyID
	pg, err := httpapi.ParsePaging(r, DefaultPageSize, MaxPageSize)
	if err != nil {
		return err
	}
	if pg.Token != "" && strings.TrimSpace(r.URL.Query().Get("purl")) == "" {
		return httpapi.ErrBadPageToken // a token opens its query's list only, and this one names none
	}
	q, err := parse(r)
	if err != nil {
		return err
	}
	pkg := q.purl.Package()
	var versions []storecomponents.VersionCount
	var projects int
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { versions, err = h.store.PackageVersions(gctx, company, pkg); return })
	g.Go(func() (err error) { projects, err = h.store.PackageProjects(gctx, company, pkg); return })
	if err := g.Wait(); err != nil {
		return err
	}
	sum := summarize(pkg, q, versions, projects)
	hq := storecomponents.HolderQuery{Package: pkg, Version: q.purl.Version, View: "all"}
	if len(q.bounds) > 0 {
		hq = storecomponents.HolderQuery{Package: pkg, Versions: sum.matching, View: "range:" + q.view}
	}
	rows, err := h.store.ListHolders(ctx, company, hq, pg.Query())
	if err != nil {
		return err
	}
	// The holders' list keeps no count: the version directory has it.
	return httpapi.WriteList(w, pg, componentList, page.Map(rows, view).Counted(sum.matchingHolders), httpapi.Member{Name: "summary", Value: sum.json})
}

// componentList is how the list answers a page: its total is the
// matching versions' holders, and next_page_token is null on the last page.
var componentList = httpapi.List{Rows: "components", Total: "total_components", Page: true, PageSize: true, TotalPages: true, NullNext: true}

// summary is the package's company-wide counts and the query's versions.
type summary struct {
	json            summaryJSON
	matching        []string // the versions the query selects
	matchingHolders int64
}

// summarize reads the version directory against the query: the versions
// it selects (the purl's version, the bounds by the ecosystem's order),
// their holders, and the package's totals.
func summarize(pkg string, q query, versions []storecomponents.VersionCount, projects int) summary {
	s := summary{matching: []string{}, json: summaryJSON{Package: pkg, Ecosystem: q.purl.Ecosystem(), TotalProjects: projects,
		TotalVersions: len(versions), MatchingVersions: []versionJSON{}}}
	type match struct {
		vc storecomponents.VersionCount
		v  *comp.Version
	}
	var ms []match
	for _, vc := range versions {
		s.json.TotalHolders += vc.Holders
		if q.purl.Version != "" && vc.Version != q.purl.Version {
			continue
		}
		m := match{vc: vc}
		if eco := q.purl.Ecosystem(); eco != "" {
			if v, err := comp.ParseVersion(eco, vc.Version); err == nil {
				m.v = &v
			}
		}
		if len(q.bounds) > 0 && (m.v == nil || !q.bounds.Holds(*m.v)) {
			continue
		}
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b match) int {
		if a.v != nil && b.v != nil {
			return a.v.Compare(*b.v)
		}
		return strings.Compare(a.vc.Version, b.vc.Version)
	})
	for _, m := range ms {
		s.matching = append(s.matching, m.vc.Version)
		s.matchingHolders += m.vc.Holders
		if len(s.json.MatchingVersions) < MaxVersions {
			s.json.MatchingVersions = append(s.json.MatchingVersions, versionJSON{Version: m.vc.Version, Holders: m.vc.Holders})
		}
	}
	s.json.MatchingVersionsTruncated = len(ms) > MaxVersions
	s.json.MatchingHolders = s.matchingHolders
	return s
}

type summaryJSON struct {
	Package                   string        `json:"package"`
	Ecosystem                 string        `json:"ecosystem"`
	TotalProjects             int           `json:"total_projects"`
	TotalVersions             int           `json:"total_versions"`
	TotalHolders              int64         `json:"total_holders"`
	MatchingHolders           int64         `json:"matching_holders"`
	MatchingVersions          []versionJSON `json:"matching_versions"`
	MatchingVersionsTruncated bool          `json:"matching_versions_truncated"`
}

type versionJSON struct {
	Version string `json:"version"`
	Holders int64  `json:"holders"`
}

type holderJSON struct {
	ProjectID   int64     `json:"project_id"`
	ProjectName string    `json:"project_name"`
	Branch      string    `json:"branch"`
	PURL        string    `json:"purl"`
	Version     string    `json:"version"`
	Ecosystem   string    `json:"ecosystem"`
	Relation    string    `json:"relation"`
	Licenses    []string  `json:"licenses"`
	Source      string    `json:"source"`
	LastScan    *scanJSON `json:"last_scan"`
}

type scanJSON struct {
	ID        string `json:"id"`
	CreatedAt string `json:"created_at"`
}

func view(h storecomponents.Holder) holderJSON {
	out := holderJSON{ProjectID: h.ProjectID, ProjectName: h.ProjectName, Branch: h.Branch, PURL: h.PURL, Version: h.Version,
		Ecosystem: h.Ecosystem, Relation: h.Relation, Licenses: h.Licenses, Source: h.Engine}
	if h.ScanID != "" {
		out.LastScan = &scanJSON{ID: h.ScanID, CreatedAt: h.ScanAt.UTC().Format(time.RFC3339)}
	}
	return out
}

package components_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/components"
	"github.com/acme/codescan-api/internal/testenv"
	comp "github.com/acme/codescan-api/shared/components"
	storecomponents "github.com/acme/codescan-api/shared/store/components"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const log4j = "pkg:maven/org.apache.logging.log4j/log4j-core"

type holding struct {
	ProjectID   int64    `json:"project_id"`
	ProjectName string   `json:"project_name"`
	Branch      string   `json:"branch"`
	PURL        string   `json:"purl"`
	Version     string   `json:"version"`
	Relation    string   `json:"relation"`
	Licenses    []string `json:"licenses"`
	Source      string   `json:"source"`
	LastScan    *struct {
		ID        string `json:"id"`
		CreatedAt string `json:"created_at"`
	} `json:"last_scan"`
}

type answer struct {
	Components      []holding `json:"components"`
	TotalComponents int       `json:"total_components"`
	TotalPages      int       `json:"total_pages"`
	Page            int       `json:"page"`
	NextPageToken   *string   `json:"next_page_token"`
	Summary         struct {
		Package          string `json:"package"`
		TotalProjects    int    `json:"total_projects"`
		TotalVersions    int    `json:"total_versions"`
		TotalHolders     int    `json:"total_holders"`
		MatchingVersions []struct {
			Version string `json:"version"`
			Holders int    `json:"holders"`
		} `json:"matching_versions"`
	} `json:"summary"`
}

type world struct {
	env  *testenv.Env
	acme *testenv.Company
	user testenv.User
}

func setup(t *testing.T) *world {
	env := testenv.New(t)
	w := &world{env: env, acme: env.Company(t, "Acme")}
	w.user = env.User(t, w.acme, testenv.UserSpec{Email: "dev@acme.test"}) // no permission: any active user reads
	return w
}

// hold writes a project branch's set as an ingestion would.
func (w *world) hold(t *testing.T, company, project int64, branch string, purls ...string) {
	t.Helper()
	var list []comp.Component
	for _, p := range purls {
		c, err := comp.New(p, "", comp.Direct, []string{"Apache-2.0"})
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, c)
	}
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	_, err := w.env.Store.Components.ReplaceComponents(context.Background(), storecomponents.SetRef{CompanyID: company, ProjectID: project,
		ProjectName: fmt.Sprintf("svc-%03d", project), Branch: branch, Engine: "cyclonedx",
		ScanID: fmt.Sprintf("00000000-0000-4000-8000-%012d", project), ScanAt: at}, list)
	if err != nil {
		t.Fatal(err)
	}
}

func (w *world) get(t *testing.T, u testenv.User, query string) (*testenv.Response, answer) {
	t.Helper()
	res := testenv.Do(t, components.New(w.env.Deps), "GET", "/components?"+query, "", testenv.Key(u)...)
	var a answer
	if res.Status == 200 {
		res.Decode(t, &a)
	}
	return res, a
}

// all follows next_page_token to the end.
func (w *world) all(t *testing.T, query string) ([]holding, answer) {
	t.Helper()
	var out []holding
	q := query
	for {
		res, a := w.get(t, w.user, q)
		if res.Status != 200 {
			t.Fatalf("%s: %d %s", q, res.Status, res.Body)
		}
		out = append(out, a.Components...)
		if a.NextPageToken == nil {
			return out, a
		}
		q = query + "&next_page_token=" + url.QueryEscape(*a.NextPageToken)
	}
}

// Of 200 projects, exactly those holding log4j-core below 2.17.1 by
// Maven's order are answered: 2.9.1 and 2.17.1-rc1 among them (text
// order says otherwise), 2.17.1 and later not, nor projects without it.
func TestLog4jBelow2171(t *testing.T) {
	w := setup(t)
	versions := []string{"2.0-beta9", "2.3", "2.9.1", "2.12.1", "2.14.1", "2.15.0", "2.16.0", "2.17.0", "2.17.1-rc1",
		"2.17.1", "2.17.2", "2.20.0", "2.24.3", ""}
	below := map[string]bool{"2.0-beta9": true, "2.3": true, "2.9.1": true, "2.12.1": true, "2.14.1": true, "2.15.0": true,
		"2.16.0": true, "2.17.0": true, "2.17.1-rc1": true}
	want, assigned := map[int64]string{}, map[int64]string{}
	for p := int64(1); p <= 200; p++ {
		v := versions[int(p)%len(versions)]
		purls := []string{fmt.Sprintf("pkg:npm/lib-%d@1.0.0", p%7)}
		if v != "" {
			purls = append(purls, log4j+"@"+v)
		}
		w.hold(t, w.acme.ID, p, "main", purls...)
		assigned[p] = v
		if below[v] {
			want[p] = v
		}
	}
	got, a := w.all(t, "purl="+url.QueryEscape(log4j)+"&version_lt=2.17.1&page_size=25")
	have := map[int64]string{}
	for _, h := range got {
		if _, dup := have[h.ProjectID]; dup {
			t.Fatalf("project %d twice", h.ProjectID)
		}
		have[h.ProjectID] = h.Version
		if h.PURL != log4j+"@"+h.Version || h.Branch != "main" || h.Relation != "direct" || h.Source != "cyclonedx" || h.LastScan == nil ||
			h.ProjectName != fmt.Sprintf("svc-%03d", h.ProjectID) || !slices.Equal(h.Licenses, []string{"Apache-2.0"}) {
			t.Fatalf("holding: %+v", h)
		}
	}
	if fmt.Sprint(have) != fmt.Sprint(want) {
		t.Fatalf("answered %d projects, want %d:\n got %v\nwant %v", len(have), len(want), have, want)
	}
	if a.TotalComponents != len(want) || a.Summary.TotalVersions != len(versions)-1 || a.Summary.TotalProjects != 200*(len(versions)-1)/len(versions)+1 {
		t.Errorf("totals: %d components, summary %+v", a.TotalComponents, a.Summary)
	}
	var order []string
	for _, v := range a.Summary.MatchingVersions {
		order = append(order, v.Version)
	}
	if strings.Join(order, " ") != "2.0-beta9 2.3 2.9.1 2.12.1 2.14.1 2.15.0 2.16.0 2.17.0 2.17.1-rc1" {
		t.Errorf("matching versions in Maven's order: %v", order)
	}
	// Bounds combine; an exact version is a key range.
	got, _ = w.all(t, "purl="+url.QueryEscape(log4j)+"&version_gte=2.15.0&version_lte=2.17.1")
	if n := len(got); n != count(assigned, "2.15.0", "2.16.0", "2.17.0", "2.17.1-rc1", "2.17.1") {
		t.Errorf("2.15.0 to 2.17.1: %d holdings", n)
	}
	got, a = w.all(t, "purl="+url.QueryEscape(log4j+"@2.14.1"))
	if len(got) == 0 || a.TotalComponents != len(got) || got[0].Version != "2.14.1" {
		t.Errorf("one version: %d (%d)", len(got), a.TotalComponents)
	}
}

func count(m map[int64]string, vs ...string) int {
	n := 0
	for _, v := range m {
		if slices.Contains(vs, v) {
			n++
		}
	}
	return n
}

// Another company's components never appear: its package answers an
// empty page, its token a 400.
func TestTenantIsolation(t *testing.T) {
	w := setup(t)
	other := w.env.Company(t, "Other")
	w.hold(t, other.ID, 1, "main", "pkg:npm/lodash@4.17.20", "pkg:npm/lodash@4.17.21")
	w.hold(t, other.ID, 2, "main", "pkg:npm/lodash@4.17.20")
	res, a := w.get(t, w.user, "purl=pkg:npm/lodash")
	if res.Status != 200 || len(a.Components) != 0 || a.TotalComponents != 0 || a.Summary.TotalProjects != 0 || a.Summary.TotalVersions != 0 {
		t.Fatalf("acme sees: %d %s", res.Status, res.Body)
	}
	res, a = w.get(t, other.Admin, "purl=pkg:npm/lodash&page_size=1")
	if res.Status != 200 || len(a.Components) != 1 || a.NextPageToken == nil || a.TotalComponents != 3 {
		t.Fatalf("other sees: %d %s", res.Status, res.Body)
	}
	res, _ = w.get(t, w.user, "purl=pkg:npm/lodash&page_size=1&next_page_token="+url.QueryEscape(*a.NextPageToken))
	if res.Status != 400 || !strings.Contains(string(res.Body), "Invalid page token") {
		t.Fatalf("other's token: %d %s", res.Status, res.Body)
	}
}

// Bad input answers 400 naming the field; nothing else is read.
func TestBadInput(t *testing.T) {
	w := setup(t)
	for _, tc := range []struct{ query, field string }{
		{"", "purl"},
		{"purl=lodash", "purl"},
		{"purl=pkg:npm/", "purl"},
		{"purl=" + url.QueryEscape("pkg:npm/lodash@1.0 0"), "purl"},
		{"purl=pkg:npm/lodash@latest", "purl"},
		{"purl=pkg:npm/lodash&version_lt=latest", "version_lt"},
		{"purl=pkg:npm/lodash&version_gte=1.2", "version_gte"},
		{"purl=pkg:golang/example.com/x&version_gt=v1", "version_gt"},
		{"purl=pkg:generic/openssl&version_lte=3.0.0", "purl"},
		{"purl=pkg:npm/lodash&version_lt=" + url.QueryEscape("1.0.0#x"), "version_lt"},
		{"purl=pkg:npm/lodash&next_page_token=garbage", "page token"},
		{"next_page_token=garbage", "page token"},
		{"purl=pkg:npm/lodash&page_size=1000", "page_size"},
	} {
		res, _ := w.get(t, w.user, tc.query)
		if res.Status != 400 || !strings.Contains(string(res.Body), tc.field) {
			t.Errorf("%q: %d %s, want 400 naming %s", tc.query, res.Status, res.Body, tc.field)
		}
	}
	// A purl type without an ecosystem still finds its holders by text.
	w.hold(t, w.acme.ID, 3, "dev", "pkg:generic/openssl@3.0.0")
	res, a := w.get(t, w.user, "purl=pkg:generic/openssl@3.0.0")
	if res.Status != 200 || len(a.Components) != 1 || a.Components[0].Branch != "dev" {
		t.Errorf("generic: %d %s", res.Status, res.Body)
	}
}

// A holding whose report names no licence answers an empty array, as the
// description requires (never null; the store reads it so).
func TestNoLicencesIsAnEmptyArray(t *testing.T) {
	w := setup(t)
	c, err := comp.New("pkg:npm/left-pad@1.3.0", "", comp.Transitive, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.env.Store.Components.ReplaceComponents(context.Background(), storecomponents.SetRef{CompanyID: w.acme.ID, ProjectID: 1,
		ProjectName: "svc-001", Branch: "main", Engine: "spdx", ScanID: "00000000-0000-4000-8000-000000000001",
		ScanAt: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)}, []comp.Component{c})
	if err != nil {
		t.Fatal(err)
	}
	res := testenv.Do(t, components.New(w.env.Deps), "GET", "/components?purl="+url.QueryEscape("pkg:npm/left-pad"), "", testenv.Key(w.user)...)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"licenses":[]`) {
		t.Fatalf("%d %s", res.Status, res.Body)
	}
}

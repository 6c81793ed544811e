package teams_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/teams"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

type member struct {
	ID        int64  `json:"id"`
	Email     string `json:"email"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

type team struct {
	ID              int64    `json:"id"`
	Name            string   `json:"name"`
	Active          bool     `json:"active"`
	Members         []member `json:"members"`
	ProjectIDs      []int64  `json:"project_ids"`
	ProjectTags     []string `json:"project_tags"`
	RepoURLPatterns []string `json:"repo_url_patterns"`
	ProjectCount    int      `json:"project_count"`
	CreatedAt       string   `json:"created_at"`
	UpdatedAt       string   `json:"updated_at"`
}

type world struct {
	env        *testenv.Env
	h          http.Handler
	acme       *testenv.Company
	manager    testenv.User // holds user_management.change_content_access
	plain      testenv.User // holds no permission
	other      *testenv.Company
	projects   map[string]schema.Project
	otherProj  schema.Project
	otherUser  testenv.User
	dev1, dev2 testenv.User
}

func setup(t *testing.T) *world {
	t.Helper()
	env := testenv.New(t)
	w := &world{env: env, h: teams.New(env.Deps), projects: map[string]schema.Project{}}
	w.acme = env.Company(t, "Acme")
	w.manager = env.User(t, w.acme, testenv.UserSpec{Email: "lead@acme.test", Permissions: []string{routes.PermChangeContentAccess}})
	w.plain = env.User(t, w.acme, testenv.UserSpec{Email: "viewer@acme.test", Permissions: []string{routes.PermViewIntegration}})
	w.dev1 = env.User(t, w.acme, testenv.UserSpec{Email: "ana@acme.test"})
	w.dev2 = env.User(t, w.acme, testenv.UserSpec{Email: "bo@acme.test"})
	w.other = env.Company(t, "Other")
	// User ids are numbered per company; this user of the other company
	// has an id no Acme user has (one numbered when ids were global).
	w.otherUser = testenv.User{User: schema.User{ID: 900, CompanyID: w.other.ID, Email: "x@other.test", FirstName: "X", LastName: "Y", Active: true}}
	if err := bulkload.PutUser(context.Background(), env.Store, w.otherUser.User); err != nil {
		t.Fatal(err)
	}
	for _, p := range []schema.Project{
		{Name: "payments-api", RepoURL: "https://github.com/acme/payments-api", Tags: []string{"backend", "pci"}},
		{Name: "web-app", RepoURL: "https://github.com/acme/web-app", Tags: []string{"Frontend"}},
		{Name: "payments-batch", RepoURL: "https://gitlab.com/acme/Payments-Batch"},
		{Name: "infra", Tags: []string{"infra"}},
	} {
		w.projects[p.Name] = w.project(t, w.acme.ID, p)
	}
	w.otherProj = w.project(t, w.other.ID, schema.Project{Name: "payments-x", RepoURL: "https://github.com/other/payments-x", Tags: []string{"backend"}})
	return w
}

func (w *world) project(t *testing.T, companyID int64, p schema.Project) schema.Project {
	t.Helper()
	p.CompanyID = companyID
	p, err := w.env.Store.Catalog.CreateProject(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *world) post(t *testing.T, u testenv.User, body string) *testenv.Response {
	t.Helper()
	return testenv.Do(t, w.h, "POST", "/teams", body, append(testenv.Key(u), "Content-Type", "application/json")...)
}

// stored is every team item and name guard of a company, straight from the table.
func (w *world) stored(t *testing.T, companyID int64) []schema.Team {
	t.Helper()
	list, err := w.env.Store.Catalog.AllTeams(context.Background(), companyID)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func decodeTeam(t *testing.T, r *testenv.Response) team {
	t.Helper()
	var body struct {
		Team team `json:"team"`
	}
	r.Decode(t, &body)
	return body.Team
}

func TestCreateAndRead(t *testing.T) {
	w := setup(t)
	body := fmt.Sprintf(`{"name":"  Payments  ","member_ids":[%d,%d,%d],"project_ids":[%d],"project_tags":["BACKEND"],"repo_url_patterns":["payments"," PAYMENTS "]}`,
		w.dev2.ID, w.dev1.ID, w.dev2.ID, w.projects["infra"].ID)
	r := w.post(t, w.manager, body)
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	got := decodeTeam(t, r)
	want := team{
		ID: got.ID, Name: "Payments", Active: true,
		Members: []member{
			{ID: w.dev1.ID, Email: "ana@acme.test", FirstName: "ana", LastName: "Tester"},
			{ID: w.dev2.ID, Email: "bo@acme.test", FirstName: "bo", LastName: "Tester"},
		},
		ProjectIDs: []int64{w.projects["infra"].ID}, ProjectTags: []string{"BACKEND"}, RepoURLPatterns: []string{"payments"},
		// payments-api (tag and URL), payments-batch (URL, other case), infra (id);
		// not web-app, not the other company's payments-x.
		ProjectCount: 3, CreatedAt: got.CreatedAt, UpdatedAt: got.CreatedAt,
	}
	if got.ID <= 0 || !equalTeams(got, want) {
		t.Fatalf("created team\n got %+v\nwant %+v", got, want)
	}
	if _, err := time.Parse(time.RFC3339, got.CreatedAt); err != nil {
		t.Fatalf("created_at: %v", err)
	}

	// The same team by id (bearer token this time) and in the list.
	r = testenv.Do(t, w.h, "GET", fmt.Sprintf("/teams/%d", got.ID), "", testenv.Bearer(w.env.Token(t, w.manager))...)
	if r.Status != 200 || !equalTeams(decodeTeam(t, r), want) {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}
	var list struct {
		Teams      []team `json:"teams"`
		TotalTeams int    `json:"total_teams"`
	}
	testenv.Do(t, w.h, "GET", "/teams", "", testenv.Key(w.acme.Admin)...).Decode(t, &list)
	if list.TotalTeams != 1 || len(list.Teams) != 1 || !equalTeams(list.Teams[0], want) {
		t.Fatalf("list: %+v", list)
	}

	// Selectors are resolved on read: a project created later is counted.
	w.project(t, w.acme.ID, schema.Project{Name: "ledger", Tags: []string{"Backend"}})
	r = testenv.Do(t, w.h, "GET", fmt.Sprintf("/teams/%d", got.ID), "", testenv.Key(w.manager)...)
	if c := decodeTeam(t, r).ProjectCount; c != 4 {
		t.Fatalf("project_count after a new tagged project: %d", c)
	}

	// A team with nothing but a name.
	r = w.post(t, w.manager, `{"name":"Empty","member_ids":null}`)
	if e := decodeTeam(t, r); r.Status != 201 || len(e.Members) != 0 || e.ProjectCount != 0 || e.ProjectIDs == nil {
		t.Fatalf("bare team: %d %s", r.Status, r.Body)
	}
	if !strings.Contains(string(r.Body), `"members":[]`) || !strings.Contains(string(r.Body), `"project_tags":[]`) {
		t.Fatalf("empty lists must be []: %s", r.Body)
	}
}

func equalTeams(a, b team) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Active == b.Active && slices.Equal(a.Members, b.Members) &&
		slices.Equal(a.ProjectIDs, b.ProjectIDs) && slices.Equal(a.ProjectTags, b.ProjectTags) &&
		slices.Equal(a.RepoURLPatterns, b.RepoURLPatterns) && a.ProjectCount == b.ProjectCount &&
		a.CreatedAt == b.CreatedAt && a.UpdatedAt == b.UpdatedAt
}

func TestDuplicateName(t *testing.T) {
	w := setup(t)
	first := w.post(t, w.manager, `{"name":"Platform","project_tags":["infra"]}`)
	if first.Status != 201 {
		t.Fatalf("create: %d %s", first.Status, first.Body)
	}
	existing := decodeTeam(t, first)
	r := w.post(t, w.manager, fmt.Sprintf(`{"name":" platform ","member_ids":[%d]}`, w.dev1.ID))
	if r.Status != http.StatusConflict {
		t.Fatalf("duplicate: %d %s", r.Status, r.Body)
	}
	body := r.JSON(t)
	if dup := decodeTeam(t, r); !equalTeams(dup, existing) || !strings.Contains(body["error"].(string), "Platform") {
		t.Fatalf("409 body: %s", r.Body)
	}
	if n := len(w.stored(t, w.acme.ID)); n != 1 {
		t.Fatalf("%d teams stored after a duplicate", n)
	}
	// Names are unique per company only.
	if r := w.post(t, w.other.Admin, `{"name":"Platform"}`); r.Status != 201 {
		t.Fatalf("same name in another company: %d %s", r.Status, r.Body)
	}
}

// Concurrent creates of one name: exactly one wins, every other gets 409
// with the winner, and one team is stored.
func TestConcurrentDuplicates(t *testing.T) {
	w := setup(t)
	const n = 6
	var mu sync.Mutex
	statuses := map[int]int{}
	ids := map[int64]bool{}
	t.Run("group", func(t *testing.T) {
		for i := range n {
			t.Run(fmt.Sprint(i), func(t *testing.T) {
				t.Parallel()
				r := w.post(t, w.manager, `{"name":"Race"}`)
				mu.Lock()
				defer mu.Unlock()
				statuses[r.Status]++
				ids[decodeTeam(t, r).ID] = true
			})
		}
	})
	if statuses[201] != 1 || statuses[409] != n-1 || len(ids) != 1 {
		t.Fatalf("statuses %v, team ids %v", statuses, ids)
	}
	if got := len(w.stored(t, w.acme.ID)); got != 1 {
		t.Fatalf("%d teams stored", got)
	}
}

func TestBadInput(t *testing.T) {
	w := setup(t)
	ids := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprint(w.dev1.ID)
		}
		return strings.Join(parts, ",")
	}
	strs := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"t%d"`, i)
		}
		return strings.Join(parts, ",")
	}
	cases := []struct {
		name, body string
		status     int
		want       string
	}{
		{"invalid json", `{"name":`, 400, `{"error":"Invalid JSON body"}`},
		{"empty body", ``, 400, `{"error":"Invalid JSON body"}`},
		{"array body", `[{"name":"x"}]`, 400, `{"error":"Invalid JSON body"}`},
		{"trailing data", `{"name":"x"} {}`, 400, `{"error":"Invalid JSON body"}`},
		{"no name", `{"project_tags":["a"]}`, 400, `{"error":"name is required"}`},
		{"null name", `{"name":null}`, 400, `{"error":"name is required"}`},
		{"blank name", `{"name":" \t "}`, 400, `{"error":"name is required"}`},
		{"long name", `{"name":"` + strings.Repeat("é", teams.MaxNameLength+1) + `"}`, 400, `{"error":"name is longer than 100 characters"}`},
		{"name not a string", `{"name":42}`, 400, `{"error":"Field \"name\" must be of type string"}`},
		{"member_ids not an array", `{"name":"x","member_ids":"1"}`, 400, ``},
		{"member id not a number", `{"name":"x","member_ids":["1"]}`, 400, ``},
		{"fractional id", `{"name":"x","project_ids":[1.5]}`, 400, ``},
		{"tags not strings", `{"name":"x","project_tags":[1]}`, 400, ``},
		{"unknown field", `{"name":"x","owner":1}`, 400, `{"error":"Unknown field \"owner\""}`},
		{"unknown and foreign member ids", fmt.Sprintf(`{"name":"x","member_ids":[%d,999999,%d]}`, w.dev1.ID, w.otherUser.ID), 400,
			fmt.Sprintf(`{"error":"Unknown member_ids: %d, 999999"}`, w.otherUser.ID)},
		{"foreign project id", fmt.Sprintf(`{"name":"x","project_ids":[%d]}`, w.otherProj.ID), 400,
			fmt.Sprintf(`{"error":"Unknown project_ids: %d"}`, w.otherProj.ID)},
		{"both bad", fmt.Sprintf(`{"name":"x","member_ids":[999999],"project_ids":[999999,%d]}`, w.projects["infra"].ID), 400,
			`{"error":"Unknown member_ids: 999999; Unknown project_ids: 999999"}`},
		{"negative member id", `{"name":"x","member_ids":[-1]}`, 400, `{"error":"member_ids must be a positive integer id (digits, no sign or leading zero)"}`},
		{"zero project id", `{"name":"x","project_ids":[0]}`, 400, `{"error":"project_ids must be a positive integer id (digits, no sign or leading zero)"}`},
		{"control character in name", `{"name":"a\u0007b"}`, 400, `{"error":"name must not contain control characters (U+0007)"}`},
		{"NUL in pattern", `{"name":"x","repo_url_patterns":["\u0000"]}`, 400, `{"error":"repo_url_patterns must not contain control characters (U+0000)"}`},
		{"bidi override in tag", `{"name":"x","project_tags":["a\u202eb"]}`, 400, `{"error":"project_tags must not contain bidirectional control characters (U+202E)"}`},
		{"invalid UTF-8", "{\"name\":\"a\xffb\"}", 400, `{"error":"The JSON body is not valid UTF-8"}`},
		{"lone surrogate", `{"name":"a\ud800b"}`, 400, `{"error":"The JSON body is not valid UTF-8"}`},
		{"empty tag", `{"name":"x","project_tags":["a"," "]}`, 400, `{"error":"project_tags entries must hold 1 to 200 characters"}`},
		{"null pattern", `{"name":"x","repo_url_patterns":[null]}`, 400, `{"error":"repo_url_patterns entries must hold 1 to 200 characters"}`},
		{"long pattern", `{"name":"x","repo_url_patterns":["` + strings.Repeat("a", teams.MaxSelectorLength+1) + `"]}`, 400, `{"error":"repo_url_patterns entries must hold 1 to 200 characters"}`},
		{"too many ids", `{"name":"x","member_ids":[` + ids(teams.MaxIDs+1) + `]}`, 400, `{"error":"member_ids may hold at most 500 ids"}`},
		{"too many tags", `{"name":"x","project_tags":[` + strs(teams.MaxSelectors+1) + `]}`, 400, `{"error":"project_tags may hold at most 100 entries"}`},
		{"oversized", `{"name":"x","project_tags":["` + strings.Repeat("a", 6<<20) + `"]}`, 413, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := w.post(t, w.manager, c.body)
			if r.Status != c.status {
				t.Fatalf("status %d, want %d: %s", r.Status, c.status, r.Body)
			}
			if c.want != "" && strings.TrimSpace(string(r.Body)) != c.want {
				t.Fatalf("body %s, want %s", r.Body, c.want)
			}
		})
	}
	if n := len(w.stored(t, w.acme.ID)); n != 0 {
		t.Fatalf("rejected requests stored %d teams", n)
	}
	// No name guard was left behind either: the names are still free.
	if r := w.post(t, w.manager, `{"name":"x"}`); r.Status != 201 {
		t.Fatalf("name x after rejected attempts: %d %s", r.Status, r.Body)
	}
	// The 100-character limit counts characters, not bytes.
	if r := w.post(t, w.manager, `{"name":"`+strings.Repeat("é", teams.MaxNameLength)+`"}`); r.Status != 201 {
		t.Fatalf("100 two-byte characters: %d %s", r.Status, r.Body)
	}
}

func TestAccessAndIsolation(t *testing.T) {
	w := setup(t)
	r := w.post(t, w.manager, `{"name":"Core"}`)
	core := decodeTeam(t, r)
	path := fmt.Sprintf("/teams/%d", core.ID)

	for _, rt := range []struct{ method, path, body string }{{"POST", "/teams", `{"name":"Denied"}`}, {"GET", "/teams", ""}, {"GET", path, ""}} {
		if r := testenv.Do(t, w.h, rt.method, rt.path, rt.body, testenv.Key(w.plain)...); r.Status != 403 || strings.TrimSpace(string(r.Body)) != `{"error":"Permission denied"}` {
			t.Fatalf("%s %s without permission: %d %s", rt.method, rt.path, r.Status, r.Body)
		}
		if r := testenv.Do(t, w.h, rt.method, rt.path, rt.body); r.Status != 401 {
			t.Fatalf("%s %s without credential: %d %s", rt.method, rt.path, r.Status, r.Body)
		}
	}
	// Another company's admin sees Acme's team as missing and lists none of it.
	if r := testenv.Do(t, w.h, "GET", path, "", testenv.Key(w.other.Admin)...); r.Status != 404 || strings.TrimSpace(string(r.Body)) != `{"error":"Team not found"}` {
		t.Fatalf("other company get: %d %s", r.Status, r.Body)
	}
	r = testenv.Do(t, w.h, "GET", "/teams", "", testenv.Key(w.other.Admin)...)
	if b := r.JSON(t); b["total_teams"].(float64) != 0 || len(b["teams"].([]any)) != 0 {
		t.Fatalf("other company list: %s", r.Body)
	}
	// It cannot put Acme's users or projects into its own team.
	r = w.post(t, w.other.Admin, fmt.Sprintf(`{"name":"Steal","member_ids":[%d],"project_ids":[%d]}`, w.dev1.ID, w.projects["web-app"].ID))
	if r.Status != 400 || !strings.Contains(string(r.Body), fmt.Sprint(w.dev1.ID)) {
		t.Fatalf("other company with Acme ids: %d %s", r.Status, r.Body)
	}
	// Its selectors never count Acme's projects.
	r = w.post(t, w.other.Admin, `{"name":"Everything","repo_url_patterns":["github.com"],"project_tags":["backend","Frontend","infra"]}`)
	if c := decodeTeam(t, r).ProjectCount; r.Status != 201 || c != 1 {
		t.Fatalf("other company selectors: %d, project_count %d", r.Status, c)
	}
	if n := len(w.stored(t, w.acme.ID)); n != 1 {
		t.Fatalf("acme has %d teams", n)
	}
	for _, p := range []string{"/teams/abc", "/teams/1.5", "/teams/99999999999999999999", "/teams/01", "/teams/+1", "/teams/0", "/teams/-1", "/teams/%201"} {
		if r := testenv.Do(t, w.h, "GET", p, "", testenv.Key(w.manager)...); r.Status != 400 || strings.TrimSpace(string(r.Body)) != `{"error":"team_id must be a positive integer id (digits, no sign or leading zero)"}` {
			t.Fatalf("%s: %d %s", p, r.Status, r.Body)
		}
	}
	if r := testenv.Do(t, w.h, "GET", "/teams/424242", "", testenv.Key(w.manager)...); r.Status != 404 {
		t.Fatalf("unknown id: %d %s", r.Status, r.Body)
	}
}

func TestPaging(t *testing.T) {
	w := setup(t)
	var created []int64
	for i := range 5 {
		r := w.post(t, w.manager, fmt.Sprintf(`{"name":"Team %d"}`, i))
		created = append(created, decodeTeam(t, r).ID)
	}
	var seen []int64
	for page := 1; page <= 4; page++ {
		r := testenv.Do(t, w.h, "GET", fmt.Sprintf("/teams?page=%d&page_size=2&unknown=1", page), "", testenv.Key(w.manager)...)
		var body struct {
			Page, PageSize, TotalPages, TotalTeams int
			Teams                                  []team
		}
		r.Decode(t, &body)
		b := r.JSON(t)
		if r.Status != 200 || b["page"].(float64) != float64(page) || b["total_pages"].(float64) != 3 || b["total_teams"].(float64) != 5 || b["page_size"].(float64) != 2 {
			t.Fatalf("page %d: %d %s", page, r.Status, r.Body)
		}
		for _, tm := range body.Teams {
			seen = append(seen, tm.ID)
		}
		if page == 4 && len(body.Teams) != 0 {
			t.Fatalf("page past the end: %s", r.Body)
		}
	}
	if !slices.Equal(seen, created) {
		t.Fatalf("pages gave %v, want %v in id order", seen, created)
	}
	r := testenv.Do(t, w.h, "GET", "/teams", "", testenv.Key(w.manager)...)
	if b := r.JSON(t); b["page"].(float64) != 1 || b["page_size"].(float64) != teams.DefaultPageSize {
		t.Fatalf("defaults: %s", r.Body)
	}
	for _, q := range []string{"page=0", "page=-1", "page=x", "page_size=0", "page_size=101", "page_size=2.5"} {
		if r := testenv.Do(t, w.h, "GET", "/teams?"+q, "", testenv.Key(w.manager)...); r.Status != 400 {
			t.Fatalf("%s: %d %s", q, r.Status, r.Body)
		}
	}
}

// listPage is one answer of GET /teams.
type listPage struct {
	Page          int    `json:"page"`
	TotalPages    int    `json:"total_pages"`
	TotalTeams    int    `json:"total_teams"`
	NextPageToken string `json:"next_page_token"`
	Teams         []team `json:"teams"`
}

func (w *world) list(t *testing.T, u testenv.User, query string) (listPage, *testenv.Response) {
	t.Helper()
	r := testenv.Do(t, w.h, "GET", "/teams?"+query, "", testenv.Key(u)...)
	var p listPage
	if r.Status == 200 {
		r.Decode(t, &p)
	}
	return p, r
}

func TestCursorPagingMatchesPageNumbers(t *testing.T) {
	w := setup(t)
	otherManager := w.env.User(t, w.other, testenv.UserSpec{Email: "lead@other.test", Permissions: []string{routes.PermChangeContentAccess}})
	var created []int64
	for i := range 7 {
		r := w.post(t, w.manager, fmt.Sprintf(`{"name":"Team %d","member_ids":[%d]}`, i, w.dev1.ID))
		created = append(created, decodeTeam(t, r).ID)
		if i < 2 {
			w.post(t, otherManager, fmt.Sprintf(`{"name":"Other %d"}`, i))
		}
	}
	var byNumber []int64
	for page := 1; page <= 3; page++ {
		p, r := w.list(t, w.manager, fmt.Sprintf("page=%d&page_size=3", page))
		if r.Status != 200 || p.Page != page || p.TotalTeams != 7 || p.TotalPages != 3 || (page < 3) != (p.NextPageToken != "") {
			t.Fatalf("page %d: %d %s", page, r.Status, r.Body)
		}
		for _, tm := range p.Teams {
			byNumber = append(byNumber, tm.ID)
		}
	}
	var byCursor []int64
	query := "page_size=3"
	var tokens []string
	for page := 1; ; page++ {
		p, r := w.list(t, w.manager, query)
		if r.Status != 200 || p.Page != page || p.TotalTeams != 7 {
			t.Fatalf("cursor page %d: %d %s", page, r.Status, r.Body)
		}
		for _, tm := range p.Teams {
			byCursor = append(byCursor, tm.ID)
			if len(tm.Members) != 1 || tm.Members[0].ID != w.dev1.ID {
				t.Fatalf("members of %d: %+v", tm.ID, tm.Members)
			}
		}
		if p.NextPageToken == "" {
			break
		}
		tokens = append(tokens, p.NextPageToken)
		// The token wins over page.
		query = "page=1&page_size=3&next_page_token=" + p.NextPageToken
	}
	if !slices.Equal(byNumber, created) || !slices.Equal(byCursor, created) {
		t.Fatalf("by number %v, by cursor %v, want %v", byNumber, byCursor, created)
	}

	// Tenant isolation: the other company sees its own two teams only, and
	// acme's token is no use to it.
	p, r := w.list(t, otherManager, "")
	if r.Status != 200 || p.TotalTeams != 2 || len(p.Teams) != 2 || p.NextPageToken != "" {
		t.Fatalf("other company: %d %s", r.Status, r.Body)
	}
	data, sum, _ := strings.Cut(tokens[0], ".")
	for name, c := range map[string]struct {
		u     testenv.User
		token string
	}{
		"foreign company": {otherManager, tokens[0]},
		"edited":          {w.manager, data[:len(data)-1] + "A." + sum},
		"unsigned":        {w.manager, data},
		"garbage":         {w.manager, "xyz"},
	} {
		if _, r := w.list(t, c.u, "next_page_token="+c.token); r.Status != 400 || strings.TrimSpace(string(r.Body)) != `{"error":"Invalid page token"}` {
			t.Errorf("%s token: %d %s", name, r.Status, r.Body)
		}
	}
}

func TestProjectCountFollowsProjectWrites(t *testing.T) {
	w := setup(t)
	r := w.post(t, w.manager, fmt.Sprintf(`{"name":"Payments","project_ids":[%d],"project_tags":["PCI"],"repo_url_patterns":["payments"]}`, w.projects["infra"].ID))
	tm := decodeTeam(t, r)
	if tm.ProjectCount != 3 { // infra by id, payments-api (tag and URL), payments-batch
		t.Fatalf("at creation: %d", tm.ProjectCount)
	}
	count := func() int {
		t.Helper()
		p, r := w.list(t, w.manager, "")
		if r.Status != 200 || len(p.Teams) != 1 {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		return p.Teams[0].ProjectCount
	}
	ctx := context.Background()
	w.project(t, w.acme.ID, schema.Project{Name: "payments-web", RepoURL: "https://x.test/payments-web", Tags: []string{"pci"}})
	w.project(t, w.acme.ID, schema.Project{Name: "docs", RepoURL: "https://x.test/docs"})
	w.project(t, w.other.ID, schema.Project{Name: "payments-y", Tags: []string{"pci"}})
	if c := count(); c != 4 {
		t.Fatalf("after creating one covered project (by tag and URL) and two others: %d", c)
	}
	late := w.project(t, w.acme.ID, schema.Project{Name: "late"})
	if err := w.env.Store.Catalog.SetProjectRepoURLIfEmpty(ctx, w.acme.ID, late.ID, "https://x.test/PAYMENTS-late"); err != nil {
		t.Fatal(err)
	}
	// Already covered by id: a URL that matches changes nothing.
	if err := w.env.Store.Catalog.SetProjectRepoURLIfEmpty(ctx, w.acme.ID, w.projects["infra"].ID, "https://x.test/payments-infra"); err != nil {
		t.Fatal(err)
	}
	// A URL already set is kept, and counts are unchanged.
	if err := w.env.Store.Catalog.SetProjectRepoURLIfEmpty(ctx, w.acme.ID, late.ID, "https://x.test/other"); err != nil {
		t.Fatal(err)
	}
	if c := count(); c != 5 {
		t.Fatalf("after a URL set on a project: %d", c)
	}
	if got := decodeTeam(t, testenv.Do(t, w.h, "GET", fmt.Sprintf("/teams/%d", tm.ID), "", testenv.Key(w.manager)...)); got.ProjectCount != 5 {
		t.Fatalf("get: %d", got.ProjectCount)
	}
}

func TestConcurrentProjectAndTeamWritesCountOnce(t *testing.T) {
	w := setup(t)
	var wg sync.WaitGroup
	const n = 6
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			p := schema.Project{CompanyID: w.acme.ID, Name: fmt.Sprintf("svc-%d", i), RepoURL: fmt.Sprintf("https://x.test/svc-%d", i)}
			if _, err := w.env.Store.Catalog.CreateProject(context.Background(), p); err != nil {
				t.Error(err)
			}
		}()
		go func() {
			defer wg.Done()
			_, err := w.env.Store.Catalog.CreateTeam(context.Background(), schema.Team{CompanyID: w.acme.ID, Name: fmt.Sprintf("T%d", i), RepoURLPatterns: []string{"svc-"}})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	p, r := w.list(t, w.manager, "")
	if r.Status != 200 || p.TotalTeams != n {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	for _, tm := range p.Teams {
		if tm.ProjectCount != n {
			t.Errorf("team %s counts %d projects, want %d", tm.Name, tm.ProjectCount, n)
		}
	}
}

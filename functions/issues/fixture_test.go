package issues_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// world is a company with projects and issues, and the issues as written
// (kept current by the test), to compute expectations independently of
// the counters.
type world struct {
	env      *testenv.Env
	h        http.Handler
	company  *testenv.Company
	projects []schema.Project
	issues   map[string]findings.Issue
}

var cwePool = []int{79, 89, 22, 78, findings.NoCWE, 798, 502, 99999}

func newWorld(t *testing.T, env *testenv.Env, name string, n int, seed uint64) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{env: env, h: issues.New(env.Deps), company: env.Company(t, name), issues: map[string]findings.Issue{}}
	repos := []string{"https://github.com/acme/app", "git@github.com:acme/app.git", "https://gitlab.com/acme/lib"}
	for k, pn := range []string{"Web", "Web-Mirror", "Lib"} {
		p, err := env.Store.Catalog.CreateProject(ctx, schema.Project{CompanyID: w.company.ID, Name: pn, RepoURL: repos[k]})
		if err != nil {
			t.Fatal(err)
		}
		w.projects = append(w.projects, p)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	var batch []findings.Issue
	for k := 0; k < n; k++ {
		p := w.projects[r.IntN(len(w.projects))]
		batch = append(batch, findings.Issue{
			ID:        uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("%s-%d", name, k))).String(),
			ProjectID: p.ID, ProjectName: p.Name,
			Branch:    []string{"main", "main", "dev", "feature/#7"}[r.IntN(4)],
			CWE:       cwePool[r.IntN(len(cwePool))],
			FilePath:  fmt.Sprintf("src/pkg%d/file%d.go", r.IntN(3), r.IntN(4)),
			Line:      1 + r.IntN(500),
			Urgency:   findings.Urgencies[r.IntN(4)],
			Status:    findings.Statuses[r.IntN(len(findings.Statuses))],
			Title:     "finding",
			CreatedAt: fmt.Sprintf("2025-03-%02dT%02d:00:00Z", 1+r.IntN(28), r.IntN(24)),
		})
	}
	if _, err := bulkload.CreateIssues(ctx, env.Store, w.company.ID, batch); err != nil {
		t.Fatal(err)
	}
	for _, i := range batch {
		w.issues[i.ID] = i
	}
	return w
}

func (w *world) get(t *testing.T, path string, q url.Values) *testenv.Response {
	t.Helper()
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return testenv.Do(t, w.h, "GET", path, "", testenv.Key(w.company.Admin)...)
}

func vals(kv ...string) url.Values {
	q := url.Values{}
	for n := 0; n+1 < len(kv); n += 2 {
		q.Set(kv[n], kv[n+1])
	}
	return q
}

// clone copies q and sets more values.
func clone(q url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string{}, v...)
	}
	for n := 0; n+1 < len(kv); n += 2 {
		out.Set(kv[n], kv[n+1])
	}
	return out
}

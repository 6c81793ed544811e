package triage_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/store/triage"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// areas are the triage room and the store's areas it needs, composed over
// one fresh table as store.New composes them (each through its own
// constructor).
type areas struct {
	tb      *ddb.Table
	f       *findings.Findings
	catalog *catalog.Catalog
	lists   *issuelists.Lists
	triage  *triage.Triage
	sca     *sca.SCA
}

func compose(t *testing.T) *areas {
	t.Helper()
	tb := ddb.New(testenv.Table(t))
	l := &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention}
	a := &areas{tb: tb, catalog: catalog.New(tb, l), triage: triage.New(tb, l)}
	sc, tr := scans.New(tb, l, scans.Deps{Catalog: a.catalog}), trends.New(tb)
	a.f = findings.New(tb, l, findings.Deps{Completion: sc, Trends: tr, Decisions: a.triage, Rules: a.triage})
	a.lists = issuelists.New(tb, a.f, sc, a.catalog, tenancy.New(tb, l), tr, a.triage)
	a.sca = sca.New(tb, l, sca.Deps{Exploits: exploits.New(tb), Rules: a.triage})
	a.triage.Use(a.f, a.lists, a.sca)
	return a
}

// seed stores n issues of a new project through the issue write path:
// every third already false_positive, the others open; it returns the
// project.
func (a *areas) seed(t *testing.T, company int64, name string, n int) schema.Project {
	t.Helper()
	ctx := context.Background()
	p, err := a.catalog.CreateProject(ctx, schema.Project{CompanyID: company, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	issues := make([]findings.Issue, n)
	changes := make([]findings.IssueChange, n)
	for k := range n {
		status := "open"
		if k%3 == 0 {
			status = "false_positive"
		}
		issues[k] = findings.Issue{ID: schema.IssueID(company, p.ID, "main", "semgrep", fmt.Sprint(name, k)), ProjectID: p.ID, ProjectName: p.Name,
			Branch: "main", Tool: "semgrep", Fingerprint: fmt.Sprint(name, k), CWE: []int{79, 89}[k%2], FilePath: fmt.Sprintf("src/f%d.go", k%4),
			Urgency: "HI", Status: status, CreatedAt: "2026-11-01T10:00:00Z"}
		if err := issues[k].Prepare(company, "2026-11-01T10:00:00Z"); err != nil {
			t.Fatal(err)
		}
		changes[k] = findings.IssueChange{After: &issues[k]}
	}
	if _, err := findings.Commit(ctx, a.f, company, changes); err != nil {
		t.Fatal(err)
	}
	if err := findings.Settle(ctx, a.f, company, findings.CounterKeys(company, issues)); err != nil {
		t.Fatal(err)
	}
	return p
}

// statuses counts the company's issues by status, item by item, and
// checks that the issue list's total (from the counters) agrees.
func (a *areas) statuses(t *testing.T, company int64) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	if err := a.lists.EachIssue(ctx, company, func(i findings.Issue) error { out[i.Status]++; return nil }); err != nil {
		t.Fatal(err)
	}
	for status, n := range out {
		p, err := a.lists.ListIssues(ctx, company, issuelists.IssueFilter{Status: status}, page.Request{Limit: 1})
		if err != nil || p.Count() != int64(n) {
			t.Fatalf("%s: the counters say %d, the items %d (%v)", status, p.Count(), n, err)
		}
	}
	return out
}

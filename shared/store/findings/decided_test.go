package findings_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/exploits"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/issuelists"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/store/trends"
	"github.com/acme/codescan-api/shared/store/triage"
)

// racing is the triage area as the findings area reads decisions from it,
// with a hook run right after the first read: a decision made while a
// scan is being applied, between its read of the decisions and its writes.
type racing struct {
	*triage.Triage
	reads  int
	during func() error
}

func (r *racing) ToolDecisions(ctx context.Context, companyID, projectID int64, tool string) (map[string]schema.Decision, error) {
	got, err := r.Triage.ToolDecisions(ctx, companyID, projectID, tool)
	if r.reads++; r.reads == 1 && err == nil && r.during != nil {
		err = r.during()
	}
	return got, err
}

// decisionWorld is a project scanned on two branches, whose decisions are
// made through the triage area while scans are applied.
type decisionWorld struct {
	tb      *ddb.Table
	f       *findings.Findings
	scans   *scans.Scans
	triage  *triage.Triage
	racing  *racing
	company int64
	project int64
}

func newDecisionWorld(t *testing.T) *decisionWorld {
	t.Helper()
	tb := ddb.New(testenv.Table(t))
	l := &ledger.Ledger{T: tb, Retention: ledger.DefaultAuditRetention}
	c, tr := catalog.New(tb, l), triage.New(tb, l)
	w := &decisionWorld{tb: tb, triage: tr, racing: &racing{Triage: tr}, company: 31}
	w.scans = scans.New(tb, l, scans.Deps{Catalog: c})
	trs := trends.New(tb)
	w.f = findings.New(tb, l, findings.Deps{Completion: w.scans, Trends: trs, Decisions: w.racing, Rules: tr})
	lists := issuelists.New(tb, w.f, w.scans, c, tenancy.New(tb, l), trs, tr)
	tr.Use(w.f, lists, sca.New(tb, l, sca.Deps{Exploits: exploits.New(tb), Rules: tr}))
	p, err := c.CreateProject(context.Background(), schema.Project{CompanyID: w.company, Name: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	w.project = p.ID
	return w
}

func (w *decisionWorld) id(branch, fp string) string {
	return findings.IssueID(w.company, w.project, branch, "t", fp)
}

// apply applies a scan of branch reporting fingerprints, with during run
// right after its first read of the decisions.
func (w *decisionWorld) apply(t *testing.T, branch string, fingerprints []string, during func() error) error {
	t.Helper()
	ctx := context.Background()
	sc, err := w.scans.CreateScan(ctx, scans.Scan{ID: uuid.NewString(), CompanyID: w.company, ProjectID: w.project,
		Branch: branch, Engine: "sarif", Tool: "t", Status: scans.ScanProcessing, CreatedAt: time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		t.Fatal(err)
	}
	var found []findings.Issue
	for _, fp := range fingerprints {
		found = append(found, findings.Issue{ID: w.id(branch, fp), ProjectID: w.project, ProjectName: "svc", Branch: branch, Tool: "t",
			Fingerprint: fp, CWE: 79, FilePath: "src/" + fp + ".go", Line: 3, Urgency: "HI", RuleID: "r-" + fp, Title: fp,
			CreatedAt: sc.CreatedAt})
	}
	w.racing.reads, w.racing.during = 0, during
	_, err = w.f.ApplyScan(ctx, w.company, sc, found)
	return err
}

// decide sets the issue of main's fingerprint to status with scope
// project (open withdraws the project decision).
func (w *decisionWorld) decide(fp, status string) error {
	_, err := w.triage.DecideIssue(context.Background(), w.company, w.id("main", fp), triage.IssueUpdate{Status: &status}, "",
		findings.Actor{UserID: 7})
	return err
}

func (w *decisionWorld) issue(t *testing.T, branch, fp string) findings.Issue {
	t.Helper()
	i, err := findings.Consistent(context.Background(), w.f, w.company, w.id(branch, fp))
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// A project decision made, or withdrawn, while a scan of another branch is
// applied (after the scan read the decisions, before it wrote the issues
// they concern) still reaches the issues that scan creates: the decider
// finds no issue to carry it to yet, and the scan, reading the decisions
// again after its writes, catches up. The counters stay exact.
func TestDecisionMadeWhileAScanIsWritten(t *testing.T) {
	t.Parallel()
	w := newDecisionWorld(t)
	if err := w.apply(t, "main", []string{"f1", "f2", "f3"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := w.decide("f2", "false_positive"); err != nil {
		t.Fatal(err)
	}
	err := w.apply(t, "dev", []string{"f1", "f2", "f3"}, func() error {
		if err := w.decide("f1", "duplicate"); err != nil {
			return err
		}
		return w.decide("f2", "open")
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		status, scope string
	}{"f1": {"duplicate", schema.DecisionProject}, "f2": {"open", ""}, "f3": {"open", ""}}
	var ids []string
	for fp, st := range want {
		for _, branch := range []string{"main", "dev"} {
			i := w.issue(t, branch, fp)
			if i.Status != st.status || i.Decision.Scope != st.scope {
				t.Errorf("%s on %s: %s, decision %+v; want %s, scope %q", fp, branch, i.Status, i.Decision, st.status, st.scope)
			}
			ids = append(ids, i.ID)
		}
	}
	if dev := w.issue(t, "dev", "f1"); dev.Decision.Source != "main" || dev.Decision.DecidedBy != 7 {
		t.Errorf("the decision dev's issue caught up with: %+v", dev.Decision)
	}
	checkCounters(t, w.tb, w.f, w.company, ids)
}

// A branch is one of the project's from its first scan's lease on: a scan
// that dies before writing an issue or settling a counter (nothing
// summarises the branch yet) leaves it known, so that a project decision
// reaches whatever issue such a scan left.
func TestABranchIsKnownFromItsFirstLease(t *testing.T) {
	t.Parallel()
	w := newDecisionWorld(t)
	if err := w.apply(t, "main", []string{"f1"}, nil); err != nil {
		t.Fatal(err)
	}
	died := errors.New("worker died")
	if err := w.apply(t, "dev", []string{"f1"}, func() error { return died }); !errors.Is(err, died) {
		t.Fatalf("a scan whose worker died: %v", err)
	}
	got, err := findings.ProjectBranches(context.Background(), w.f, w.company, w.project)
	if err != nil || !slices.Equal(got, []string{"dev", "main"}) {
		t.Fatalf("the project's branches: %v %v", got, err)
	}
}

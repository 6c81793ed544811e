package uploads_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
)

func fixture(t *testing.T, format, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "shared", "reports", format, "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type scaPage struct {
	Status      string `json:"status"`
	TotalIssues int    `json:"total_issues"`
	Issues      []struct {
		ID           string `json:"id"`
		Package      struct{ Name, Version, Ecosystem string }
		IDs          []string `json:"ids"`
		Reachability struct {
			IsReachable bool   `json:"is_reachable"`
			Status      string `json:"status"`
			Usages      []struct {
				Filename            string `json:"filename"`
				IsFunctionReachable string `json:"is_function_reachable"`
			} `json:"usages"`
		} `json:"reachability"`
	} `json:"issues"`
}

// A real govulncheck run: the module that calls a vulnerable function gets
// an SCA issue whose usages are the call paths; the one that only requires
// the module gets is_reachable false. No SAST issue comes of it.
func TestGovulncheckReachability(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	scan := w.uploadOK(t, "engine=govulncheck&project=calls&branch=main&run_id="+newRun(), fixture(t, "govulncheck", "calls.json"))
	res := testenv.Do(t, w.find, "GET", "/scan/"+scan.ScanID+"/issues/sca?page_size=100", "", testenv.Key(w.company.Admin)...)
	var page scaPage
	res.Decode(t, &page)
	if res.Status != 200 || page.TotalIssues == 0 {
		t.Fatalf("scan SCA issues: %d %s", res.Status, res.Body)
	}
	var called string
	for _, i := range page.Issues {
		if i.Package.Name == "github.com/tidwall/gjson" && i.Reachability.IsReachable {
			called = i.ID
			if len(i.Reachability.Usages) == 0 || !strings.HasSuffix(i.Reachability.Usages[0].Filename, "query.go") ||
				i.Reachability.Usages[0].IsFunctionReachable != "true" {
				t.Fatalf("usages of the called vulnerability: %+v", i.Reachability)
			}
		}
	}
	if called == "" {
		t.Fatalf("no reachable gjson finding: %s", res.Body)
	}
	if res := testenv.Do(t, w.find, "GET", "/issues/sca/"+called, "", testenv.Key(w.company.Admin)...); res.Status != 200 {
		t.Fatalf("GET /issues/sca/{id}: %d %s", res.Status, res.Body)
	}
	if _, total := w.groups(t, "project=calls"); total != 0 {
		t.Fatalf("govulncheck made %d SAST issues", total)
	}

	w.uploadOK(t, "engine=govulncheck&project=requires&branch=main&run_id="+newRun(), fixture(t, "govulncheck", "requires.json"))
	res = testenv.Do(t, w.find, "GET", "/issues/sca?project=requires", "", testenv.Key(w.company.Admin)...)
	res.Decode(t, &page)
	if page.TotalIssues == 0 {
		t.Fatalf("requires: %s", res.Body)
	}
	for _, i := range page.Issues {
		if i.Reachability.IsReachable || i.Reachability.Status != "module_required" {
			t.Fatalf("a required-only module's finding: %+v", i)
		}
	}
	if res := testenv.Do(t, w.find, "GET", "/issues/sca?project=nope", "", testenv.Key(w.company.Admin)...); res.Status != 404 {
		t.Fatalf("unknown project: %d %s", res.Status, res.Body)
	}
}

// A linter's SARIF (staticcheck: no security classification) yields quality
// issues with classifications, and no SAST issue.
func TestLinterSARIFIsQuality(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	scan := w.uploadOK(t, "engine=sarif&project=lint&branch=main&run_id="+newRun(), fixture(t, "sarif", "staticcheck.sarif"))
	if _, total := w.groups(t, "project=lint"); total != 0 {
		t.Fatalf("a linter's report made %d SAST issues", total)
	}
	res := testenv.Do(t, w.find, "GET", "/scan/"+scan.ScanID+"/issues/quality?page_size=50", "", testenv.Key(w.company.Admin)...)
	var page struct {
		TotalIssues int `json:"total_issues"`
		Issues      []struct {
			Classification struct{ ID, Name string } `json:"classification"`
		} `json:"issues"`
	}
	res.Decode(t, &page)
	if res.Status != 200 || page.TotalIssues == 0 || page.Issues[0].Classification.Name == "" {
		t.Fatalf("quality issues: %d %s", res.Status, res.Body)
	}
	res = testenv.Do(t, w.find, "GET", "/issues/code-quality?project=lint", "", testenv.Key(w.company.Admin)...)
	var project struct {
		TotalIssues int `json:"total_issues"`
	}
	res.Decode(t, &project)
	if res.Status != 200 || project.TotalIssues != page.TotalIssues {
		t.Fatalf("project quality list: %d %s (scan has %d)", res.Status, res.Body, page.TotalIssues)
	}
}

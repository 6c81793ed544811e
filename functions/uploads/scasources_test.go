package uploads_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
)

type scaListed struct {
	ID      string `json:"id"`
	Package struct {
		Name string `json:"name"`
	} `json:"package"`
	Sources []struct {
		Tool       string `json:"tool"`
		AdvisoryID string `json:"advisory_id"`
	} `json:"sources"`
}

func (i scaListed) sources() string { return fmt.Sprint(i.Sources) }

// scaList is the project's SCA findings by package (GET /issues/sca, its
// answer validated against the OpenAPI description) and their total.
func (w *world) scaList(t *testing.T, project string) (map[string]scaListed, int) {
	t.Helper()
	res := testenv.Do(t, w.find, "GET", "/issues/sca?page_size=100&project="+project, "", testenv.Key(w.company.Admin)...)
	if res.Status != 200 {
		t.Fatalf("GET /issues/sca: %d %s", res.Status, res.Body)
	}
	var body struct {
		TotalIssues int         `json:"total_issues"`
		Issues      []scaListed `json:"issues"`
	}
	res.Decode(t, &body)
	out := map[string]scaListed{}
	for _, i := range body.Issues {
		if _, dup := out[i.Package.Name]; dup {
			t.Fatalf("two findings of %s: %s", i.Package.Name, res.Body)
		}
		out[i.Package.Name] = i
	}
	return out, body.TotalIssues
}

// govulncheck's and OSV-Scanner's real reports of the same module graph
// (GO-2021-0053 in github.com/gogo/protobuf 1.3.1) uploaded through the
// API are one finding with two sources, counted once; OSV-Scanner
// stopping leaves it with govulncheck's.
func TestSCASourcesThroughTheAPI(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	const gogo = "github.com/gogo/protobuf"
	osv := read("../../shared/reports/osv/testdata/go-and-cargo.json")
	w.uploadOK(t, "engine=govulncheck&project=gogo&branch=main&run_id="+newRun(), read("../../shared/reports/govulncheck/testdata/gogo.json"))
	w.uploadOK(t, "engine=osv-scanner&project=gogo&branch=main&run_id="+newRun(), osv)
	list, total := w.scaList(t, "gogo")
	if total != 2 || len(list) != 2 || list[gogo].sources() != "[{govulncheck GO-2021-0053} {osv-scanner GO-2021-0053}]" {
		t.Fatalf("after both scanners: %d %+v", total, list)
	}
	res := testenv.Do(t, w.find, "GET", "/issues/sca/"+list[gogo].ID, "", testenv.Key(w.company.Admin)...)
	var one struct {
		Issue scaListed `json:"issue"`
	}
	if res.Status != 200 {
		t.Fatalf("GET /issues/sca/{id}: %d %s", res.Status, res.Body)
	}
	res.Decode(t, &one)
	if one.Issue.sources() != list[gogo].sources() {
		t.Fatalf("one finding's sources: %s", res.Body)
	}
	testenv.Recount(t, w.env.Store, w.company.ID)

	// OSV-Scanner's next report no longer has the go.mod's result.
	var doc map[string]any
	if err := json.Unmarshal(osv, &doc); err != nil {
		t.Fatal(err)
	}
	doc["results"] = doc["results"].([]any)[1:]
	without, _ := json.Marshal(doc)
	w.uploadOK(t, "engine=osv-scanner&project=gogo&branch=main&run_id="+newRun(), without)
	list, total = w.scaList(t, "gogo")
	if total != 2 || list[gogo].sources() != "[{govulncheck GO-2021-0053}]" {
		t.Fatalf("after OSV-Scanner stopped: %d %+v", total, list)
	}
	testenv.Recount(t, w.env.Store, w.company.ID)
}

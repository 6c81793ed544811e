package projects_test

import (
	"context"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/exportformat"
	"github.com/acme/codescan-api/shared/exportjob"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/store/findings"
)

// escapedControl is a JSON escape of a character no answer may show: a
// reader decodes it back into the character.
var escapedControl = regexp.MustCompile(`(?i)\\u(00[01][0-9a-f]|007f|008[0-9a-f]|009[0-9a-f]|202[a-e]|206[6-9])`)

// shown returns what of out a reader would see: a C0 control other than
// newline and tab, DEL, a C1 control, a bidi embedding, override or
// isolate, raw or JSON-escaped; "" when there is none.
func shown(out []byte) string {
	for _, r := range string(out) {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return string(r)
		}
	}
	return escapedControl.FindString(string(out))
}

// The report paths of hostile.sarif as stored: control and bidi control
// characters written out, raw or percent-encoded in the report.
const (
	hostilePath        = "src/evil<U+001B>[31m<U+202E><U+2066>.go"
	hostileEncodedPath = "lib/<U+001B><U+202E>\uFFFDpct.py"
)

// A SARIF report full of NUL, ESC sequences, BEL, C1 controls, DEL and
// bidi overrides and isolates (in the message, rule id, rule title, tool
// name, artifact URIs, snippet, fingerprint, branch and a suppression's
// justification), and an OSV-Scanner report with the same in package,
// versions and advisory text, go through the real upload and ingestion:
// no answer, report or export shows one of those characters, and the
// issue's file path, as stored, can be uploaded with /code-upload.
func TestReportTextIsVisibleEverywhere(t *testing.T) {
	w := newWorld(t)
	sast := w.uploadAs(t, "sarif", uuid.NewString(), hostileReport(t, "hostile.sarif"))
	sca := w.uploadAs(t, "osv-scanner", uuid.NewString(), hostileReport(t, "hostile-osv.json"))
	issues := w.issues(t, sast.ScanID)
	if len(issues) != 2 {
		t.Fatalf("%d issues: %+v", len(issues), issues)
	}
	outputs := map[string][]byte{}
	for _, i := range issues {
		outputs["GET /issue/"+i.FilePath] = w.ok(t, "/issue/"+i.ID)
	}
	for _, path := range []string{"/scan/" + sast.ScanID + "/issues", "/issues?project=hostile", "/scan/" + sca.ScanID + "/issues/sca",
		"/issues/sca?project=hostile", "/scan/" + sast.ScanID + "/report?format=json"} {
		outputs["GET "+path] = w.ok(t, path)
	}
	for _, format := range []string{"html", "markdown", "sarif"} {
		outputs["report "+format] = w.text(t, "/scan/"+sast.ScanID+"/report?format="+format)
	}
	for _, f := range exportformat.Formats {
		outputs["export "+string(f)] = w.export(t, f)
	}
	for name, out := range outputs {
		if bad := shown(out); bad != "" {
			t.Errorf("%s shows %q:\n%s", name, bad, out)
		}
		if !strings.Contains(string(out), "U+202E") {
			t.Errorf("%s: the override is not written out:\n%s", name, out)
		}
	}
	checkStored(t, issues)
	if m := regexp.MustCompile(`@[^<]`).Find(outputs["report markdown"]); m != nil {
		t.Errorf("the Markdown report mentions %q", m)
	}
	w.checkUploadablePaths(t, issues)
}

// checkStored checks the issues' texts as stored: written out, the
// justification of the suppression kept as its reason.
func checkStored(t *testing.T, issues []findings.Issue) {
	t.Helper()
	byPath := map[string]findings.Issue{}
	for _, i := range issues {
		byPath[i.FilePath] = i
	}
	open, suppressed := byPath[hostilePath], byPath[hostileEncodedPath]
	if open.RuleID != "rule<U+0000><U+001B>[31m<U+0085><U+202E>id" || open.Tool != "Evil<U+0000>Scan<U+001B>[31m<U+0007><U+202E>" ||
		!strings.Contains(open.Message, "RLO <U+202E>desrever<U+202C>, isolate <U+2066>x<U+2069>,\nCRLF and a\ttab") {
		t.Errorf("open issue %+v", open)
	}
	if suppressed.Status != findings.Suppressed || suppressed.Reason != "because<U+0000> <U+001B>[31m<U+0007><U+0085><U+009B><U+007F><U+202E><U+2066> @bob" {
		t.Errorf("suppressed issue %+v", suppressed)
	}
}

// checkUploadablePaths sends each issue's stored path to /code-upload,
// which takes it as it is, then the same report in that run: the issues
// now show the uploaded file's lines.
func (w *world) checkUploadablePaths(t *testing.T, issues []findings.Issue) {
	t.Helper()
	run := uuid.NewString()
	for _, i := range issues {
		q := url.Values{"run_id": {run}, "path": {i.FilePath}}
		res := testenv.Do(t, w.h, "POST", "/code-upload?"+q.Encode(), "package evil\n\nvar uploaded = 1\n", testenv.Key(w.acme.Admin)...)
		if res.Status != 200 || res.JSON(t)["path"] != i.FilePath {
			t.Fatalf("code-upload of %q: %d %s", i.FilePath, res.Status, res.Body)
		}
	}
	again := w.uploadAs(t, "sarif", run, hostileReport(t, "hostile.sarif"))
	for _, i := range w.issues(t, again.ScanID) {
		if !strings.Contains(i.Code, "var uploaded = 1") {
			t.Errorf("%s shows no uploaded code: %q", i.FilePath, i.Code)
		}
	}
}

// hostileReport reads a hostile report of the parsers' test data.
func hostileReport(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../shared/reports/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// uploadAs uploads a report of engine for the project "hostile" in run
// and ingests it.
func (w *world) uploadAs(t *testing.T, engine, run, body string) uploaded {
	t.Helper()
	q := url.Values{"engine": {engine}, "run_id": {run}, "project": {"hostile"}, "branch": {"main"}}
	res := testenv.Do(t, w.h, "POST", "/scan-upload?"+q.Encode(), body, testenv.Key(w.acme.Admin)...)
	if res.Status != 200 {
		t.Fatalf("upload %s: %d %s", engine, res.Status, res.Body)
	}
	var out uploaded
	res.Decode(t, &out)
	w.env.Ingest(t, w.acme.ID, out.ScanID)
	return out
}

// ok is the body of a JSON answer that must be 200.
func (w *world) ok(t *testing.T, path string) []byte {
	t.Helper()
	res := w.get(t, w.acme.Admin, path)
	if res.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, res.Status, res.Body)
	}
	return res.Body
}

// text is the body of a report that must be 200.
func (w *world) text(t *testing.T, path string) []byte {
	t.Helper()
	res := testenv.DoText(t, w.h, "GET", path, testenv.Key(w.acme.Admin)...)
	if res.Status != 200 {
		t.Fatalf("GET %s: %d %s", path, res.Status, res.Body)
	}
	return res.Body
}

// export asks for an export of the project "hostile" in format f, runs
// the export worker on it as the ingester does, and returns the file.
func (w *world) export(t *testing.T, f exportformat.Format) []byte {
	t.Helper()
	res := testenv.Do(t, w.h, "POST", "/exports", `{"format":"`+string(f)+`","filters":{"project":"hostile"}}`, testenv.Key(w.acme.Admin)...)
	if res.Status != 202 {
		t.Fatalf("POST /exports %s: %d %s", f, res.Status, res.Body)
	}
	var a struct {
		Export struct{ ID string } `json:"export"`
	}
	res.Decode(t, &a)
	ctx := context.Background()
	if err := w.env.Ingester(t).Exporter.Run(ctx, exportjob.Job{CompanyID: w.acme.ID, ID: a.Export.ID}); err != nil {
		t.Fatalf("export %s: %v", f, err)
	}
	out, err := testenv.Reports(t).Get(ctx, reportstore.ExportKey(w.acme.ID, a.Export.ID, f.Extension()), 1<<20)
	if err != nil {
		t.Fatalf("export %s: %v", f, err)
	}
	return out
}

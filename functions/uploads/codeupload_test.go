package uploads_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acme/codescan-api/functions/uploads"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/routes"
)

// sendSource posts one source file of a run as the real client does
// (multipart, part file).
func (w *world) sendSource(t *testing.T, u testenv.User, run, path, content string) *testenv.Response {
	t.Helper()
	body, ct := multipartBody(t, "file", content)
	return w.post(t, u, "/code-upload?run_id="+run+"&path="+path, ct, body)
}

func (w *world) sendSourceOK(t *testing.T, run, path, content string) {
	t.Helper()
	if res := w.sendSource(t, w.uploader, run, path, content); res.Status != 200 {
		t.Fatalf("code-upload %s: %d %s", path, res.Status, res.Body)
	}
}

// queryFile is db/query.go with pad blank lines on top: its two SQL
// injections are lines pad+4 and pad+9.
func queryFile(pad int) string {
	return strings.Repeat("\n", pad) + `package db

func Delete(x string) {
	db.Exec("DELETE FROM t WHERE x=" + x)
}

func Find(id string) {
	defer trace()
	rows, _ := db.Query("SELECT * FROM t WHERE id=" + id)
	use(rows)
}
`
}

// The files sent before the report give its findings their code: the
// issue shows the flagged line with its context, and two findings of one
// rule in one file (whose messages are the same) keep their identities
// when lines move and when the report lists them in another order; a new
// finding above them is a new issue, not one of theirs.
func TestSourceFilesGiveIdentityAndSnippets(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const q = "engine=sarif&project=src&branch=main&run_id="

	run1 := newRun()
	w.sendSourceOK(t, run1, "./db//query.go", queryFile(0))
	// Another company's file under the same run id and path is its own.
	other := w.env.Company(t, "Other")
	otherCI := w.env.User(t, other, testenv.UserSpec{Email: "ci@other.test", Permissions: []string{routes.PermUploadScan}})
	if res := w.sendSource(t, otherCI, run1, "db/query.go", "evil\nevil\nevil\nevil\nevil\nevil\nevil\nevil\nevil\n"); res.Status != 200 {
		t.Fatalf("other company's code-upload: %d %s", res.Status, res.Body)
	}
	w.uploadOK(t, q+run1, gosecLike("sqli 89 db/query.go 4", "sqli 89 db/query.go 9"))
	first := w.issues(t, "project=src")
	if len(first) != 2 {
		t.Fatalf("first scan: %+v", first)
	}
	idAt := map[int]string{}
	for _, i := range first {
		idAt[i.Location.LineNumber] = i.ID
	}
	_, issue := w.issueJSON(t, w.company.Admin, idAt[9])
	snippet, _ := issue["details"].(map[string]any)["code_snippet"].(map[string]any)
	wantCode := "\nfunc Find(id string) {\n\tdefer trace()\n\trows, _ := db.Query(\"SELECT * FROM t WHERE id=\" + id)\n\tuse(rows)\n}"
	if snippet == nil || snippet["start_line"] != float64(6) || snippet["end_line"] != float64(11) || snippet["code"] != wantCode {
		t.Fatalf("code snippet of the line 9 issue: %#v", snippet)
	}

	// Three lines inserted on top, the report lists the findings the other
	// way round, and a new injection comes first.
	run2 := newRun()
	moved := strings.Replace(queryFile(3), "package db\n", "package db\n\nfunc Drop(t string) { db.Exec(\"DROP TABLE \" + t) }\n", 1)
	w.sendSourceOK(t, run2, "db/query.go", moved)
	w.uploadOK(t, q+run2, gosecLike("sqli 89 db/query.go 14", "sqli 89 db/query.go 9", "sqli 89 db/query.go 6"))
	second := w.issues(t, "project=src")
	if len(second) != 3 {
		t.Fatalf("second scan: %+v", second)
	}
	lineOf := map[string]int{}
	for _, i := range second {
		lineOf[i.ID] = i.Location.LineNumber
	}
	if lineOf[idAt[4]] != 9 || lineOf[idAt[9]] != 14 {
		t.Fatalf("moved findings: first scan %v, second scan %v", idAt, lineOf)
	}
	for id, line := range lineOf {
		if id != idAt[4] && id != idAt[9] && line != 6 {
			t.Fatalf("the new finding: %v", lineOf)
		}
	}
	_, issue = w.issueJSON(t, w.company.Admin, idAt[4])
	snippet, _ = issue["details"].(map[string]any)["code_snippet"].(map[string]any)
	if snippet == nil || snippet["start_line"] != float64(6) || !strings.Contains(snippet["code"].(string), `db.Exec("DELETE FROM t WHERE x=" + x)`) {
		t.Fatalf("code snippet after the move: %#v", snippet)
	}

	// The other company's file stayed under its own prefix.
	ctx := context.Background()
	got, err := testenv.Reports(t).Get(ctx, reportstore.SourceKey(other.ID, run1, "db/query.go"), 1<<20)
	if err != nil || !bytes.HasPrefix(got, []byte("evil")) {
		t.Fatalf("other company's file: %q %v", got, err)
	}
}

// Without the files, the issue shows the report's own snippet or none.
func TestNoSourceFiles(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.uploadOK(t, "engine=sarif&project=bare&branch=main&run_id="+newRun(), gosecLike("sqli 89 db/query.go 4"))
	list := w.issues(t, "project=bare")
	if len(list) != 1 {
		t.Fatalf("issues: %+v", list)
	}
	_, issue := w.issueJSON(t, w.company.Admin, list[0].ID)
	if details := issue["details"].(map[string]any); details["code_snippet"] != nil {
		t.Fatalf("details without source: %v", details)
	}
}

func TestCodeUploadErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	run := newRun()
	viewer := w.env.User(t, w.company, testenv.UserSpec{Email: "dev@acme.test"})
	raw := func(u testenv.User, query, ct string, body []byte) *testenv.Response {
		return w.post(t, u, "/code-upload?"+query, ct, body)
	}
	big := strings.Repeat("x", uploads.MaxSourceBytes+1)
	cases := []struct {
		name   string
		res    *testenv.Response
		status int
		msg    string
	}{
		{"no run", raw(w.uploader, "path=a.go", "text/plain", []byte("x")), 400, "Missing run_id"},
		{"no path", raw(w.uploader, "run_id="+run, "text/plain", []byte("x")), 400, "Missing path"},
		{"absolute", w.sendSource(t, w.uploader, run, "/etc/passwd", "x"), 400, "path must be relative to the repository root"},
		{"drive", w.sendSource(t, w.uploader, run, "C:%5Csrc%5Ca.go", "x"), 400, "path must be relative to the repository root"},
		{"escaping", w.sendSource(t, w.uploader, run, "src/../../a.go", "x"), 400, "path must not leave the repository"},
		{"escaping encoded", w.sendSource(t, w.uploader, run, "%252e%252e/a.go", "x"), 400, "path must not leave the repository"},
		{"only dots", w.sendSource(t, w.uploader, run, "./.", "x"), 400, "path names no file"},
		{"binary", w.sendSource(t, w.uploader, run, "a.bin", "ELF\x00\x01"), 400, "The source file is not text (it contains NUL bytes)"},
		{"binary past 8 KiB", w.sendSource(t, w.uploader, run, "b.go", strings.Repeat("// text\n", 2<<10)+"\x00"), 400, "The source file is not text (it contains NUL bytes)"},
		{"no file part", raw(w.uploader, "run_id="+run+"&path=a.go", "multipart/form-data; boundary=xx", []byte("--xx\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nx\r\n--xx--\r\n")), 400, `The multipart body has no part named "file"`},
		{"too large", w.sendSource(t, w.uploader, run, "a.go", big), 413, "The source file exceeds the upload limit of 1 MiB"},
		{"too large raw", raw(w.uploader, "run_id="+run+"&path=a.go", "text/plain", []byte(big)), 413, "The source file exceeds the upload limit of 1 MiB"},
	}
	for _, c := range cases {
		want := fmt.Sprintf(`{"status":"error","message":%q}`, c.msg)
		if c.res.Status != c.status || !jsonEqual(t, c.res.Body, want) {
			t.Errorf("%s: %d %s, want %d %s", c.name, c.res.Status, c.res.Body, c.status, want)
		}
	}
	if res := w.sendSource(t, viewer, run, "a.go", "x"); res.Status != 403 {
		t.Errorf("without scans.upload_scan: %d %s", res.Status, res.Body)
	}
	// Nothing of the refused uploads was stored.
	objs, err := testenv.Reports(t).List(context.Background(), reportstore.SourcePrefix(w.company.ID, run))
	if err != nil || len(objs) != 0 {
		t.Fatalf("stored after refusals: %v %v", objs, err)
	}
	// The raw body is accepted too, and answers the normalised path.
	res := raw(w.uploader, "run_id="+run+"&path=src%5Capp%5Cmain.go", "application/octet-stream", []byte("package main\n"))
	if res.Status != 200 || !jsonEqual(t, res.Body, `{"status":"ok","path":"src/app/main.go"}`) {
		t.Fatalf("raw body: %d %s", res.Status, res.Body)
	}
}

// One finding, one issue, with or without its source: a report whose
// findings carry no fingerprint or snippet of their own, uploaded with the
// file (identified by code), without it (by message) and with it again, in
// either order first, keeps the issues it created open, under their ids,
// with no history entry and exact counts.
func TestOneIdentityWithOrWithoutSource(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	report := gosecLike("sqli 89 db/query.go 4", "sqli 89 db/query.go 9")
	for _, c := range []struct {
		project string
		source  []bool // per upload: the run sends db/query.go
	}{
		{"source-first", []bool{true, false, true, false}},
		{"bare-first", []bool{false, true, false, true}},
	} {
		q := "engine=sarif&branch=main&project=" + c.project + "&run_id="
		var ids []string
		for n, withSource := range c.source {
			run := newRun()
			if withSource {
				w.sendSourceOK(t, run, "db/query.go", queryFile(0))
			}
			w.uploadOK(t, q+run, report)
			var got []string
			for _, i := range w.issues(t, "project="+c.project) {
				if i.Status != "open" {
					t.Fatalf("%s upload %d (source %v): issue %s is %s", c.project, n+1, withSource, i.ID, i.Status)
				}
				got = append(got, i.ID)
			}
			slices.Sort(got)
			if n == 0 {
				ids = got
			} else if !slices.Equal(got, ids) {
				t.Fatalf("%s upload %d (source %v): issues %v, first upload's %v", c.project, n+1, withSource, got, ids)
			}
		}
		for _, id := range ids {
			var hist struct{ History []any }
			testenv.Do(t, w.find, "GET", "/issue/"+id+"/history", "", testenv.Key(w.company.Admin)...).Decode(t, &hist)
			if len(hist.History) != 0 {
				t.Fatalf("%s: issue %s has history %v", c.project, id, hist.History)
			}
		}
		if len(ids) != 2 {
			t.Fatalf("%s: %d issues, want 2", c.project, len(ids))
		}
	}
	testenv.Recount(t, w.env.Store, w.company.ID)
}

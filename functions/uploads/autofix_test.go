package uploads_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fixed is db/query.go (queryFile) with its first query parameterised.
var fixed = strings.Replace(queryFile(0), `db.Exec("DELETE FROM t WHERE x=" + x)`, `db.Exec("DELETE FROM t WHERE x = ?", x)`, 1)

// fixReport is a SARIF report of gosec's shape whose results carry fixes
// in staticcheck's and Semgrep's shape (SARIF `fixes`, line and column
// regions): one per result as given, "" for none.
func fixReport(results ...[2]string) []byte {
	var rs []string
	for n, r := range results {
		fixes := ""
		if r[1] != "" {
			fixes = `,"fixes":[{"description":{"text":"Use a query parameter"},"artifactChanges":[{"artifactLocation":{"uri":"db/query.go"},"replacements":[` + r[1] + `]}]}]`
		}
		rs = append(rs, fmt.Sprintf(`{"ruleId":"G%d","level":"error","message":{"text":"SQL string concatenation"},`+
			`"properties":{"tags":["security","CWE-89"]},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"db/query.go"},`+
			`"region":{"startLine":%s}}}]%s}`, 201+n, r[0], fixes))
	}
	return []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gosec"}},"results":[` + strings.Join(rs, ",") + `]}]}`)
}

// replacement is the fix of line 4's query: columns 10 to 38 (bytes) hold
// `"DELETE FROM t WHERE x=" + x`.
func replacement(deletedLine int, inserted string) string {
	return fmt.Sprintf(`{"deletedRegion":{"startLine":%d,"startColumn":10,"endColumn":38},"insertedContent":{"text":%q}}`, deletedLine, inserted)
}

// suggestionOf is the auto_fix_suggestion GET /issue/{id} answers for the
// issue of rule, nil for null.
func (w *world) suggestionOf(t *testing.T, project, rule string) map[string]any {
	t.Helper()
	i, ok := byRule(t, w.issues(t, "project="+project))[rule]
	if !ok {
		t.Fatalf("no issue of %s", rule)
	}
	_, issue := w.issueJSON(t, w.company.Admin, i.ID)
	s, present := issue["auto_fix_suggestion"]
	if !present {
		t.Fatalf("no auto_fix_suggestion member: %v", issue)
	}
	m, _ := s.(map[string]any)
	return m
}

// patched applies a suggestion's diff to original, at path, with GNU patch
// as a developer would (`patch -p1`, no fuzz: a dry run first), and
// returns the file it leaves.
func patched(t *testing.T, s map[string]any, path, original string) string {
	t.Helper()
	bin, err := exec.LookPath("patch")
	if err != nil {
		t.Fatalf("GNU patch is needed to check the diffs (apt-get install patch): %v", err)
	}
	p, _ := s["patch"].(map[string]any)
	diff, _ := p["diff"].(string)
	dir := t.TempDir()
	file := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fix.patch"), []byte(diff), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--dry-run"}, nil} {
		cmd := exec.Command(bin, append([]string{"-p1", "--batch", "--fuzz=0", "-i", "fix.patch"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("patch %v: %v\n%s\ndiff:\n%s", args, err, out, diff)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// The scanner's own fix, end to end: a SARIF result's fix and the file the
// run uploaded give the issue a suggestion whose diff GNU patch applies to
// that file and whose full code is the fixed file; a fix whose region lies
// outside the file, or that does not delete what it says, answers null;
// so does every fix of a run without the file (the issue, re-detected,
// drops it), and the fix a later report changes is the one shown.
func TestScannersOwnFix(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const q = "engine=sarif&project=fixes&branch=main&run_id="
	snippet := `,"snippet":{"text":"\"DELETE FROM t WHERE x=\" + x"}`
	good := replacement(4, `"DELETE FROM t WHERE x = ?", x`)
	outside := replacement(40, `"x"`)
	wrongText := strings.Replace(good, `"endColumn":38`, `"endColumn":38`+strings.Replace(snippet, "DELETE", "UPDATE", 1), 1)
	saysRight := strings.Replace(good, `"endColumn":38`, `"endColumn":38`+snippet, 1)
	rep := fixReport([2]string{"4", saysRight}, [2]string{"4", outside}, [2]string{"4", wrongText}, [2]string{"9", ""})

	run := newRun()
	w.sendSourceOK(t, run, "db/query.go", queryFile(0))
	w.uploadOK(t, q+run, rep)
	s := w.suggestionOf(t, "fixes", "G201")
	p, _ := s["patch"].(map[string]any)
	if s == nil || s["status"] != "fix_available" || p["full_code"] != fixed || p["explanation"] != "Use a query parameter" {
		t.Fatalf("the fix that applies: %v", s)
	}
	if got := patched(t, s, "db/query.go", queryFile(0)); got != fixed {
		t.Fatalf("patch -p1 leaves\n%s\nwant\n%s", got, fixed)
	}
	for _, rule := range []string{"G202", "G203", "G204"} {
		if s := w.suggestionOf(t, "fixes", rule); s != nil {
			t.Fatalf("%s (outside the file, other deleted text, no fix): %v", rule, s)
		}
	}
	id := s["id"]

	// The same report without the file: nothing to show the fix on.
	w.uploadOK(t, q+newRun(), rep)
	if s := w.suggestionOf(t, "fixes", "G201"); s != nil {
		t.Fatalf("without the file: %v", s)
	}

	// With the file again: the fix is back. Then another fix of the same
	// file (nothing else the issue shows changes): the issue shows it.
	run = newRun()
	w.sendSourceOK(t, run, "db/query.go", queryFile(0))
	w.uploadOK(t, q+run, rep)
	if s := w.suggestionOf(t, "fixes", "G201"); s == nil || s["id"] != id || s["patch"].(map[string]any)["full_code"] != fixed {
		t.Fatalf("with the file again: %v", s)
	}
	run = newRun()
	w.sendSourceOK(t, run, "db/query.go", queryFile(0))
	w.uploadOK(t, q+run, fixReport([2]string{"4", replacement(4, `"DELETE FROM t WHERE x = $1", x`)}))
	s = w.suggestionOf(t, "fixes", "G201")
	want := strings.Replace(fixed, "x = ?", "x = $1", 1)
	if s == nil || s["id"] != id || patched(t, s, "db/query.go", queryFile(0)) != want {
		t.Fatalf("the changed fix: %v", s)
	}
}

// Semgrep's own JSON with its autofix (testdata of shared/reports/semgrep:
// a CWE-326 rule of its autofix tests) and the file it scanned: the
// suggestion's full code is the file Semgrep's own --autofix writes, and
// its diff patches the file into it.
func TestSemgrepFixEndToEnd(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	const dir = "../../shared/reports/semgrep/testdata/autofix/"
	source, fixedBySemgrep := readString(t, dir+"defaulthttpclient.java"), readString(t, dir+"defaulthttpclient.java-fixed")
	run := newRun()
	w.sendSourceOK(t, run, "targets/autofix/defaulthttpclient.java", source)
	w.uploadOK(t, "engine=semgrep&project=semgrep-fix&branch=main&run_id="+run, []byte(readString(t, dir+"defaulthttpclient.json")))
	list := w.issues(t, "project=semgrep-fix")
	if len(list) != 1 {
		t.Fatalf("issues: %+v", list)
	}
	s := w.suggestionOf(t, "semgrep-fix", list[0].RuleID)
	p, _ := s["patch"].(map[string]any)
	if s == nil || p["full_code"] != fixedBySemgrep || !strings.HasSuffix(p["explanation"].(string), "Autofix: Semgrep rule suggested fix") {
		t.Fatalf("suggestion: %v", s)
	}
	if got := patched(t, s, "targets/autofix/defaulthttpclient.java", source); got != fixedBySemgrep {
		t.Fatalf("patch -p1 leaves\n%s", got)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

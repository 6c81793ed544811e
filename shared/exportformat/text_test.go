package exportformat_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/exploitfeed"
	"github.com/acme/codescan-api/shared/exportformat"
)

// hostile holds every character class the edge refuses.
const hostile = "\x00\x1b[31m\a\u0085\u009b\x7f\u202e\u2066"

// escapedControl is a JSON escape of a character no output may show: a
// reader decodes it back into the character.
var escapedControl = regexp.MustCompile(`(?i)\\u(00[01][0-9a-f]|007f|008[0-9a-f]|009[0-9a-f]|202[a-e]|206[6-9])`)

// shown returns what of out a reader would see raw: a C0 control other
// than newline and tab, DEL, a C1 control, a bidi control, or a JSON
// escape of one; "" when there is none.
func shown(out string) string {
	for _, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return strings.ToUpper(string(r))
		}
	}
	return escapedControl.FindString(out)
}

// hostileRows are an SAST and an SCA finding with the refused characters
// in every text, the feeds' included (as stored before ingestion cleaned
// report text).
func hostileRows() []exportformat.Row {
	k := &exploitfeed.KEV{DateAdded: "2021-12-10" + hostile, DueDate: hostile, VendorProject: "Apache" + hostile, Product: hostile, Name: hostile}
	e := &exploitfeed.EPSS{Score: 0.5, Percentile: 0.9, Date: "2026-01-01" + hostile}
	sast := exportformat.Row{ID: "id" + hostile, Project: "p" + hostile, Branch: "b" + hostile, Tool: "t" + hostile, Rule: "r" + hostile,
		Title: "title" + hostile + "\r\nnext", CWE: 79, Path: "src/" + hostile + ".go", Line: 3, Urgency: "HI", Status: "open",
		StatusReason: "why" + hostile, Fingerprint: "fp" + hostile}
	sca := sast
	sca.Status, sca.Package, sca.Ecosystem, sca.Version, sca.FixedVersion = "accepted_risk", "pkg"+hostile, "Go"+hostile, "1"+hostile, "2"+hostile
	sca.Advisories = []string{"CVE-2099-1" + hostile, "GHSA" + hostile}
	sca.Exploit = &exportformat.Exploit{KEV: k, EPSS: e}
	return []exportformat.Row{sast, sca}
}

// No format writes a refused character, raw or JSON-escaped: each text is
// written out by the edge's rule; the rows given are left as they were.
func TestExportsWriteTextVisible(t *testing.T) {
	for _, f := range exportformat.Formats {
		rows := hostileRows()
		out, n := write(t, f, rows)
		if n == 0 {
			t.Fatalf("%s: nothing written", f)
		}
		if bad := shown(string(out)); bad != "" {
			t.Errorf("%s shows %q:\n%s", f, bad, out)
		}
		if !strings.Contains(string(out), "<U+001B>[31m<U+0007><U+0085><U+009B><U+007F><U+202E><U+2066>") {
			t.Errorf("%s: the characters are not written out:\n%s", f, out)
		}
		if rows[1].Advisories[0] != "CVE-2099-1"+hostile || rows[1].Exploit.KEV.Product != hostile || rows[1].Exploit.EPSS.Date != "2026-01-01"+hostile {
			t.Errorf("%s changed the source's rows", f)
		}
	}
}

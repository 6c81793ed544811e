package report_test

import (
	"strings"
	"testing"

	"github.com/acme/codescan-api/functions/projects/report"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/scans"
)

// Hostile values stay text: no element, attribute or script of theirs
// reaches the page, whose policy forbids scripts anyway.
func TestHTMLKeepsHostileValuesText(t *testing.T) {
	const evil = `"><script>alert('x')</script><a href="javascript:alert(1)">`
	out, err := report.HTML(report.Input{
		Project: evil,
		Scan:    scans.Scan{ID: evil, Branch: evil, GitSHA: evil, CreatedAt: evil},
		Issues: []findings.Issue{{ID: "i1", Urgency: `CR" onmouseover="alert(1)`, Status: evil, CWE: findings.NoCWE,
			FilePath: evil, Title: "javascript:alert(1)", Message: evil}},
	})
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	for _, bad := range []string{"<script", "<a ", `href="`, `" onmouseover`, `'x'`} {
		if strings.Contains(page, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
	for _, want := range []string{
		`&#34;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;a href=&#34;javascript:alert(1)&#34;&gt;`,
		`<td class="CR&#34; onmouseover=&#34;alert(1)">`,
		`content="default-src 'none'; style-src 'unsafe-inline'"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

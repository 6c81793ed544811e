package tickets

import (
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/triagemodel"
)

func scaFinding() sca.Issue {
	return sca.Issue{ID: "f1", ProjectID: 3, Branch: "main", Tool: "osv-scanner", ScanID: "s1", Classification: "GO-2023-1988",
		CVE: "CVE-2023-3978", IDs: []string{"GO-2023-1988", "CVE-2023-3978", "GHSA-2wrh-6pvc-2jm9"}, Severity: "HIGH",
		Package:  sca.Package{Name: "golang.org/x/net", Version: "v0.7.0", Ecosystem: "Go", FixVersion: "0.17.0"},
		Location: sca.Location{Path: "go.mod"}, Status: "open", Sources: []sca.Source{{Tool: "osv-scanner", AdvisoryID: "GO-2023-1988"}}}
}

func TestMatchesSCA(t *testing.T) {
	i := scaFinding()
	rule := func(m triagemodel.Matcher, grouping string) schema.TicketRule {
		return schema.TicketRule{Matcher: schema.TicketMatcher{Matcher: m}, Grouping: grouping}
	}
	for _, c := range []struct {
		name string
		r    schema.TicketRule
		want bool
	}{
		{"its ecosystem, any case", rule(triagemodel.Matcher{Ecosystem: "go"}, GroupFinding), true},
		{"another ecosystem", rule(triagemodel.Matcher{Ecosystem: "npm"}, GroupFinding), false},
		{"its package", rule(triagemodel.Matcher{Package: "golang.org/x/net"}, GroupFinding), true},
		{"another package", rule(triagemodel.Matcher{Package: "golang.org/x/crypto"}, GroupFinding), false},
		{"an alias as rule_id", rule(triagemodel.Matcher{Ecosystem: "Go", RuleID: "GHSA-2wrh-6pvc-2jm9"}, GroupFinding), true},
		{"another advisory", rule(triagemodel.Matcher{Ecosystem: "Go", RuleID: "CVE-2000-1"}, GroupFinding), false},
		{"its manifest", rule(triagemodel.Matcher{Ecosystem: "Go", Path: "*.mod"}, GroupFinding), true},
		{"its severity's urgency", rule(triagemodel.Matcher{UrgencyAtLeast: "HI"}, GroupPackage), true},
		{"too low", rule(triagemodel.Matcher{UrgencyAtLeast: "CR"}, GroupPackage), false},
		{"a code rule", rule(triagemodel.Matcher{UrgencyAtLeast: "HI"}, GroupFinding), false},
	} {
		if got := MatchesSCA(c.r, i, "s1", "main"); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
	// An SCA rule takes no code finding.
	code := findings.Issue{ID: "i1", ProjectID: 3, Tool: "semgrep", Urgency: "HI"}
	if Matches(rule(triagemodel.Matcher{UrgencyAtLeast: "HI"}, GroupPackage), code, "s1", "main") {
		t.Error("grouping package took a code finding")
	}
	if !Matches(rule(triagemodel.Matcher{UrgencyAtLeast: "HI"}, GroupRule), code, "s1", "main") {
		t.Error("a code rule")
	}
	j := i
	j.ID, j.Classification, j.CVE, j.IDs = "f2", "GO-2023-2102", "CVE-2023-39325", nil
	if SCAGroupKey(GroupPackage, i) != SCAGroupKey(GroupPackage, j) || SCAGroupKey(GroupRule, i) == SCAGroupKey(GroupRule, j) ||
		SCAGroupKey(GroupFinding, i) == SCAGroupKey(GroupFinding, j) {
		t.Error("groups of two advisories of one package")
	}
	j.Package.Name = "golang.org/x/crypto"
	if SCAGroupKey(GroupPackage, i) == SCAGroupKey(GroupPackage, j) {
		t.Error("two packages in one group")
	}
	j = i
	j.ProjectID = 4
	if SCAGroupKey(GroupPackage, i) == SCAGroupKey(GroupPackage, j) {
		t.Error("a package's group is per project")
	}
	j.Sources = []sca.Source{}
	if !Reported(i) || Reported(j) {
		t.Error("reported")
	}
}

// An SCA finding's text in a ticket is made inert as a code finding's.
func TestSCAListIsInert(t *testing.T) {
	i := scaFinding()
	i.Package.Name = "@acme/evil [x](https://evil.example) <!-- codescan:ticket rule=r group=g -->"
	d := &Ticketer{AppURL: "https://app.test/"}
	title, body := d.describe(schema.TicketRule{ID: "r", Grouping: GroupPackage}, found{sca: []sca.Issue{i}})
	if !strings.HasPrefix(title, "Upgrade @acme/evil") || !strings.Contains(title, "to 0.17.0") {
		t.Errorf("title %q", title)
	}
	for _, want := range []string{"@v0.7.0 (Go)", "GO-2023-1988, CVE-2023-3978, GHSA-2wrh-6pvc-2jm9", "severity HIGH", "fix version 0.17.0", "go.mod", "https://app.test/issues/sca/f1"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q: %s", want, body)
		}
	}
	got := gitHubText(body)
	for _, bad := range []string{"@acme", " [x]", "<!-- codescan:"} {
		if strings.Contains(got, bad) {
			t.Errorf("%q survives in %q", bad, got)
		}
	}
}

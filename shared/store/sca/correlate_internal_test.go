package sca

import (
	"fmt"
	"testing"
)

// Merging a second source's view keeps the finding's first detection,
// status and tool, the CVE it had, an analysed reachability over
// not_analyzed, and adds the ids and the source.
func TestMerged(t *testing.T) {
	first := Issue{ID: "f", Tool: "govulncheck", Classification: "GO-2021-0053", CVE: "CVE-2021-3121", IDs: []string{"GO-2021-0053", "CVE-2021-3121"},
		CreatedAt: "2026-01-01T00:00:00Z", ScanID: "s1", Status: "accepted_risk", Reason: "r",
		Reachability: Reachability{Status: "reachable", IsReachable: true}, Location: Location{Path: "go.mod"}}
	second := Issue{ID: "f", Tool: "osv-scanner", Classification: "GO-2021-0053", IDs: []string{"GO-2021-0053", "GHSA-c3h9-896r-86jm"},
		CreatedAt: "2026-01-02T00:00:00Z", ScanID: "s2", Status: "open",
		Reachability: Reachability{Status: notAnalyzed}, Sources: []Source{{Tool: "osv-scanner", AdvisoryID: "GO-2021-0053"}}}
	m := merged(first, second)
	if m.CreatedAt != first.CreatedAt || m.ScanID != "s1" || m.Status != "accepted_risk" || m.Reason != "r" || m.Tool != "govulncheck" ||
		m.CVE != "CVE-2021-3121" || !m.Reachability.IsReachable || m.Location.Path != "go.mod" {
		t.Fatalf("merged: %+v", m)
	}
	if got := fmt.Sprint(m.IDs, m.Sources); got != "[GO-2021-0053 CVE-2021-3121 GHSA-c3h9-896r-86jm] [{govulncheck GO-2021-0053} {osv-scanner GO-2021-0053}]" {
		t.Fatalf("ids and sources: %s", got)
	}
	// The same source again replaces its own entry.
	if got := fmt.Sprint(withSources(m, []Source{{Tool: "osv-scanner", AdvisoryID: "GHSA-c3h9-896r-86jm"}})); got != "[{govulncheck GO-2021-0053} {osv-scanner GHSA-c3h9-896r-86jm}]" {
		t.Fatalf("replaced source: %s", got)
	}
}

func TestAliasKeyNormalises(t *testing.T) {
	a := Issue{ProjectID: 3, Branch: "main", Package: Package{Name: "github.com/gogo/protobuf", Version: "v1.3.1", Ecosystem: "Go"}}
	b := a
	b.Package.Version = "1.3.1"
	if aliasKey(7, a, "ghsa-c3h9-896r-86jm") != aliasKey(7, b, "GHSA-c3h9-896r-86jm") {
		t.Fatal("a Go version's v and an advisory id's case changed the alias key")
	}
	n := Issue{ProjectID: 3, Branch: "main", Package: Package{Name: "x", Version: "v1.0.0", Ecosystem: "npm"}}
	m := n
	m.Package.Version = "1.0.0"
	if aliasKey(7, n, "CVE-1") == aliasKey(7, m, "CVE-1") {
		t.Fatal("another ecosystem's v was dropped")
	}
	if aliasKey(7, a, "CVE-1") == aliasKey(8, a, "CVE-1") {
		t.Fatal("two companies share an alias key")
	}
}

package exportformat

import (
	"encoding/json"
	"io"

	"github.com/acme/codescan-api/shared/exploitfeed"
)

// jsonRow is a finding's JSON Lines object. exploit is null before the
// finding was enriched; then kev and epss are null when the CVE is not in
// the catalogue or has no score.
type jsonRow struct {
	ID           string       `json:"id"`
	Project      string       `json:"project"`
	Branch       string       `json:"branch"`
	Tool         string       `json:"tool"`
	Rule         string       `json:"rule"`
	Title        string       `json:"title"`
	CWE          string       `json:"cwe,omitempty"`
	Path         string       `json:"path"`
	Line         int          `json:"line,omitempty"`
	Urgency      string       `json:"urgency"`
	Status       string       `json:"status"`
	StatusReason string       `json:"status_reason,omitempty"`
	FirstSeen    string       `json:"first_seen,omitempty"`
	LastSeen     string       `json:"last_seen,omitempty"`
	Package      *jsonPackage `json:"package,omitempty"`
	Advisories   []string     `json:"advisories,omitempty"`
	Reachable    *bool        `json:"reachable,omitempty"`
	Exploit      *jsonExploit `json:"exploit"`
}

type jsonPackage struct {
	Name         string `json:"name"`
	Ecosystem    string `json:"ecosystem"`
	Version      string `json:"version"`
	FixedVersion string `json:"fixed_version,omitempty"`
}

type jsonExploit struct {
	KEV  *exploitfeed.KEV  `json:"kev"`
	EPSS *exploitfeed.EPSS `json:"epss"`
}

func writeJSONLines(w io.Writer, src Source) (int, error) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	err := src(func(r Row) error {
		j := jsonRow{ID: r.ID, Project: r.Project, Branch: r.Branch, Tool: r.Tool, Rule: r.Rule, Title: r.Title,
			CWE: cweID(r), Path: r.Path, Line: r.Line, Urgency: r.Urgency, Status: r.Status, StatusReason: r.StatusReason,
			FirstSeen: stamp(r.FirstSeen), LastSeen: stamp(r.LastSeen), Advisories: r.Advisories, Reachable: r.Reachable}
		j.Package, j.Exploit = packageOf(r), exploitOf(r)
		if err := enc.Encode(j); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}

// packageOf is an SCA finding's package (nil for a SAST finding).
func packageOf(r Row) *jsonPackage {
	if r.Package == "" {
		return nil
	}
	return &jsonPackage{Name: r.Package, Ecosystem: r.Ecosystem, Version: r.Version, FixedVersion: r.FixedVersion}
}

// exploitOf is a finding's enrichment (nil when never enriched).
func exploitOf(r Row) *jsonExploit {
	if r.Exploit == nil {
		return nil
	}
	return &jsonExploit{KEV: r.Exploit.KEV, EPSS: r.Exploit.EPSS}
}

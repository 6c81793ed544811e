package exportjob

import (
	"slices"
	"time"

	"github.com/acme/codescan-api/shared/exportformat"
	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/sca"
)

// issueRow is a SAST issue as exports show it. The issue keeps no time of
// its last detection, so LastSeen stays empty.
func issueRow(i findings.Issue) exportformat.Row {
	return exportformat.Row{ID: i.ID, Project: i.ProjectName, Branch: i.Branch, Tool: i.Tool, Rule: i.RuleID, Title: i.Title,
		CWE: i.CWE, Path: i.FilePath, Line: i.Line, Urgency: i.Urgency, Status: i.Status, StatusReason: i.Reason,
		Fingerprint: i.Fingerprint, FirstSeen: stamp(i.CreatedAt)}
}

// scaRow is an SCA finding of project as exports show it: its advisories
// (the CVE first among them when the scanner named one apart), its
// reachability only when it was analysed.
func scaRow(project string, i sca.Issue) exportformat.Row {
	ids := slices.Clone(i.IDs)
	if i.CVE != "" && !slices.Contains(ids, i.CVE) {
		ids = append([]string{i.CVE}, ids...)
	}
	r := exportformat.Row{ID: i.ID, Project: project, Branch: i.Branch, Tool: i.Tool, Rule: i.Classification, Title: i.Description,
		Path: i.Location.Path, Urgency: sca.Urgency(i.Severity), Status: i.Status, StatusReason: i.Reason, FirstSeen: stamp(i.CreatedAt),
		Package: i.Package.Name, Ecosystem: i.Package.Ecosystem, Version: i.Package.Version, FixedVersion: i.Package.FixVersion,
		Advisories: ids}
	if r.Status == "" {
		r.Status = "open"
	}
	switch i.Reachability.Status {
	case reportfinding.Reachable:
		r.Reachable = new(true)
	case reportfinding.PackageImported, reportfinding.ModuleRequired:
		r.Reachable = new(false)
	}
	return r
}

// stamp reads a stored RFC 3339 time (zero when absent or unreadable).
func stamp(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t
}

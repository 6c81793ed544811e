package emailrender

import "strings"

// componentAffectedData is a component_affected event's data (shared/ingest's
// WriteComponents): an advisory and the company's holders of an affected
// version of its package.
type componentAffectedData struct {
	AdvisoryID       string   `json:"advisory_id"`
	Package          string   `json:"package"`
	AffectedVersions []string `json:"affected_versions"`
	TotalHolders     int64    `json:"total_holders"`
	Holders          []struct {
		ProjectName string `json:"project_name"`
		Branch      string `json:"branch"`
		Version     string `json:"version"`
	} `json:"holders"`
}

func componentAffected(d componentAffectedData, e *email) {
	versions := strings.Join(d.AffectedVersions, ", ")
	e.subjectf("%s affects %s, held by %d project branch(es)", d.AdvisoryID, d.Package, d.TotalHolders)
	e.textf("The advisory %s affects %s at %s, which %d holding(s) of the company use:", d.AdvisoryID, d.Package, versions, d.TotalHolders)
	e.htmlf("<h2>Advisory %s affects %s</h2>\n<p>Affected versions held: <b>%s</b>; holdings: %d.</p>\n<ul>\n", d.AdvisoryID, d.Package, versions, d.TotalHolders)
	for _, h := range d.Holders {
		e.textf("\n- %s (%s) at %s", h.ProjectName, h.Branch, h.Version)
		e.htmlf("<li>%s (%s) at %s</li>\n", h.ProjectName, h.Branch, h.Version)
	}
	e.htmlf("</ul>\n")
}

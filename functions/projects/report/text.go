package report

import (
	"slices"

	"github.com/acme/codescan-api/shared/cleantext"
)

// visible is in with every text a report shows following the edge's text
// rule (cleantext.Visible: control and bidi control characters written out
// as `<U+XXXX>`; an issue's title and message keep their newlines and
// tabs). Ingestion stores report text so already; doing it here as well
// keeps every rendering clean whatever an issue holds (one stored before
// the rule). The caller's issues are copied, never changed.
func visible(in Input) Input {
	line := cleantext.Visible
	in.Project = line(in.Project)
	s := &in.Scan
	s.ID, s.Branch, s.GitSHA, s.CreatedAt = line(s.ID), line(s.Branch), line(s.GitSHA), line(s.CreatedAt)
	s.Tool, s.Engine, s.RepoURL = line(s.Tool), line(s.Engine), line(s.RepoURL)
	in.Issues = slices.Clone(in.Issues)
	for n := range in.Issues {
		i := &in.Issues[n]
		i.ID, i.Urgency, i.Status, i.FilePath = line(i.ID), line(i.Urgency), line(i.Status), line(i.FilePath)
		i.RuleID, i.Fingerprint = line(i.RuleID), line(i.Fingerprint)
		i.Title, i.Message = cleantext.VisibleLines(i.Title), cleantext.VisibleLines(i.Message)
	}
	if in.Trend != nil {
		t := *in.Trend
		t.Title = line(t.Title)
		in.Trend = &t
	}
	return in
}

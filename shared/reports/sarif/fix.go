package sarif

import (
	"cmp"
	"strings"

	gosarif "github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"

	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reports/norm"
)

// fix reads the result's proposed fix (SARIF 2.1.0 §3.55): the first of
// its fixes whose changes can all be read, else the first one's
// description alone (gosec writes its suggestion as a fix whose change
// names no file). A fix that cannot be read whole keeps no replacement:
// applying part of it would write code its author never proposed.
func (rc *runContext) fix(res *gosarif.Result) *reportfinding.Fix {
	var first *reportfinding.Fix
	for _, fx := range res.Fixes {
		if fx == nil {
			continue
		}
		explanation := ""
		if fx.Description != nil {
			explanation = norm.Clip(cmp.Or(str(fx.Description.Text), str(fx.Description.Markdown)))
		}
		reps, _ := rc.replacements(fx) // nil when they cannot be read whole
		kept := reportfinding.KeepFix(explanation, reps)
		if kept != nil && len(kept.Replacements) > 0 {
			return kept
		}
		if first == nil {
			first = kept
		}
	}
	return first
}

// replacements are a fix's changes, false when one cannot be read: a
// change naming no file (by URI: an absent artifact index reads as 0,
// which would name the run's first artifact), a path outside the
// repository, a region that is neither lines nor offsets, or binary
// content.
func (rc *runContext) replacements(fx *gosarif.Fix) ([]reportfinding.Replacement, bool) {
	var out []reportfinding.Replacement
	for _, ch := range fx.ArtifactChanges {
		if ch == nil || ch.ArtifactLocation == nil || str(ch.ArtifactLocation.URI) == "" {
			return nil, false
		}
		path, dropped := rc.path(ch.ArtifactLocation)
		if path == "" || dropped != "" {
			return nil, false
		}
		for _, r := range ch.Replacements {
			if r == nil || len(out) == reportfinding.MaxFixReplacements {
				return nil, false
			}
			rep, ok := rc.replacement(path, r)
			if !ok {
				return nil, false
			}
			out = append(out, rep)
		}
	}
	return out, len(out) > 0
}

func (rc *runContext) replacement(path string, r *gosarif.Replacement) (reportfinding.Replacement, bool) {
	region, ok := rc.region(r.DeletedRegion)
	if !ok {
		return reportfinding.Replacement{}, false
	}
	rep := reportfinding.Replacement{Path: path, Region: region}
	if c := r.InsertedContent; c != nil {
		if c.Text == nil && c.Binary != nil {
			return reportfinding.Replacement{}, false
		}
		rep.Inserted = str(c.Text)
	}
	if s := r.DeletedRegion.Snippet; s != nil {
		rep.Deleted = str(s.Text)
	}
	return rep, true
}

// region reads a deleted region: by lines and columns when it has a start
// line, else by character offsets, else by byte offsets (§3.30). The
// decoder reads an absent offset as 0, so offsets count only with their
// length.
func (rc *runContext) region(r *gosarif.Region) (reportfinding.Region, bool) {
	if r == nil {
		return reportfinding.Region{}, false
	}
	var out reportfinding.Region
	switch {
	case r.StartLine != nil:
		out = reportfinding.Region{StartLine: *r.StartLine, StartColumn: intOf(r.StartColumn), EndLine: intOf(r.EndLine),
			EndColumn: intOf(r.EndColumn), Unit: rc.columnUnit(), MaybeWholeLines: rc.isSemgrep()}
		if out.StartLine < 1 || out.StartColumn < 0 || out.EndLine < 0 || out.EndColumn < 0 {
			return reportfinding.Region{}, false
		}
	case r.CharLength != nil:
		out = reportfinding.Region{Offset: r.CharOffset, Length: *r.CharLength, Unit: rc.columnUnit()}
	case r.ByteLength != nil:
		out = reportfinding.Region{Offset: r.ByteOffset, Length: *r.ByteLength, Unit: reportfinding.UnitBytes}
	default:
		return reportfinding.Region{}, false
	}
	return out, out.Offset >= 0 && out.Length >= 0
}

// columnUnit is what the run's columns and character offsets count: its
// columnKind when it says, else bytes for the tools known to write UTF-8
// byte columns without saying so (staticcheck: "we're currently reporting
// column information using UTF-8 byte offsets", lintcmd/sarif.go; Semgrep
// takes its columns from byte positions), else unknown.
func (rc *runContext) columnUnit() reportfinding.Unit {
	switch str(rc.run.ColumnKind) {
	case "utf16CodeUnits":
		return reportfinding.UnitUTF16
	case "unicodeCodePoints":
		return reportfinding.UnitCodePoints
	}
	if rc.isSemgrep() || strings.EqualFold(rc.tool, "staticcheck") {
		return reportfinding.UnitBytes
	}
	return reportfinding.UnitUnknown
}

// isSemgrep tells Semgrep's runs ("Semgrep OSS", "Semgrep Pro"), whose
// fixes insert the whole fixed lines in place of the match (its
// Sarif_output.ml: deleted_region is the match, inserted_content its
// fixed_lines).
func (rc *runContext) isSemgrep() bool {
	return strings.HasPrefix(strings.ToLower(rc.tool), "semgrep")
}

func intOf(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

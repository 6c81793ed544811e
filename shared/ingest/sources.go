package ingest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/reportfinding"
	"github.com/acme/codescan-api/shared/reportfinding/fixdiff"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/sourcecode"
)

// Sources gives the findings whose file the run uploaded (POST
// /code-upload) their code: the flagged lines become the snippet when the
// report carries none, so the finding is identified by its code and keeps
// its identity when lines move (see Fingerprints), and the lines around
// them are kept for the details. SCA findings name manifests, not
// code. Files are read one at a time, each once; a file that is gone
// (expired) or over the limit is passed over. A SAST finding's fix (the
// scanner's own, reportfinding.Fix) is applied to its file: when it applies, its
// diff and the changed file are what the issue shows (fixdiff); without
// the file there is nothing to show it on.
func Sources(ctx context.Context, objects reportstore.Store, companyID int64, runID string, fs []reportfinding.Finding) error {
	prefix := reportstore.SourcePrefix(companyID, runID)
	listed, err := objects.List(ctx, prefix)
	if err != nil || len(listed) == 0 {
		return err
	}
	uploaded := make(map[string]bool, len(listed))
	for _, o := range listed {
		uploaded[strings.TrimPrefix(o.Key, prefix)] = true
	}
	byPath := map[string][]int{}
	for n, f := range fs {
		if f.Kind != reportfinding.SCA && (f.Line > 0 || fixable(f)) && uploaded[reportstore.SourceName(f.Path)] {
			byPath[f.Path] = append(byPath[f.Path], n)
		}
	}
	budget := fixdiff.NewBudget()
	for _, p := range slices.Sorted(maps.Keys(byPath)) { // in order: the budget then spares the same fixes every time
		at := byPath[p]
		content, err := objects.Get(ctx, reportstore.SourceKey(companyID, runID, p), sourcecode.MaxFileBytes)
		if errors.Is(err, reportstore.ErrNotFound) || errors.Is(err, reportstore.ErrTooLarge) {
			continue
		}
		if err != nil {
			return err
		}
		applyFixes(fs, at, p, content, budget)
		for _, n := range at {
			ex, ok := sourcecode.Cut(content, fs[n].Line, fs[n].EndLine)
			if !ok {
				continue
			}
			// Files pass /code-upload's check of their path, not of their
			// content: the report text rule (cleantext.VisibleLines)
			// applies to what the issue shows of them.
			if fs[n].Snippet == "" {
				fs[n].Snippet, fs[n].SnippetFromSource = cleantext.VisibleLines(ex.Flagged), true
			}
			fs[n].CodeStart, fs[n].Code = ex.Start, cleantext.VisibleLines(ex.Code)
		}
	}
	return nil
}

// fixable tells whether a finding's fix is applied: the issues of SAST
// findings show it (Issues); quality findings' do not yet.
func fixable(f reportfinding.Finding) bool {
	return f.Fix != nil && len(f.Fix.Replacements) > 0 && (f.Kind == reportfinding.SAST || f.Kind == "")
}

// applyFixes applies the fixes of the findings at of fs to their file's
// content (indexed once for them all). A fix that does not apply, or is
// past a bound of fixdiff or the scan's budget, is not offered: it keeps
// no diff.
func applyFixes(fs []reportfinding.Finding, at []int, path string, content []byte, budget *fixdiff.Budget) {
	var file *fixdiff.File
	for _, n := range at {
		if !fixable(fs[n]) {
			continue
		}
		if file == nil {
			file = fixdiff.NewFile(path, content)
		}
		_ = fixdiff.Apply(fs[n].Fix, file, budget) // the reason is the fix's, not the upload's
	}
}

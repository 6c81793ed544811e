package ingest

import (
	"context"
	"errors"
	"strings"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/finding"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/sourcecode"
)

// Sources gives the findings whose file the run uploaded (POST
// /code-upload) their code: the flagged lines become the snippet when the
// report carries none, so the finding is identified by its code and keeps
// its identity when lines move (see Fingerprints), and the lines around
// them are kept for the details. SCA findings name manifests, not
// code. Files are read one at a time, each once; a file that is gone
// (expired) or over the limit is passed over.
func Sources(ctx context.Context, objects reportstore.Store, companyID int64, runID string, fs []finding.Finding) error {
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
		if f.Kind != finding.SCA && f.Line > 0 && uploaded[reportstore.SourceName(f.Path)] {
			byPath[f.Path] = append(byPath[f.Path], n)
		}
	}
	for p, at := range byPath {
		content, err := objects.Get(ctx, reportstore.SourceKey(companyID, runID, p), sourcecode.MaxFileBytes)
		if errors.Is(err, reportstore.ErrNotFound) || errors.Is(err, reportstore.ErrTooLarge) {
			continue
		}
		if err != nil {
			return err
		}
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

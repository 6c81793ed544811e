package uploads

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/reports/norm"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/sourcecode"
	"github.com/acme/codescan-api/shared/store/scans"
)

// Bounds of the source files of a run: one file is at most
// sourcecode.MaxFileBytes; a run sends the files its report names, which
// MaxRunSources files and MaxRunSourceBytes bound (as much as the largest
// report).
const (
	MaxSourceBytes    = sourcecode.MaxFileBytes
	MaxRunSources     = 5000
	MaxRunSourceBytes = MaxReportBytes
)

// codeUpload stores one source file of a run (POST /code-upload), before
// the run's report: the ingester reads the files its findings name, to
// show their code and to identify them by the flagged lines' content. The
// path is normalised as report paths are (repository-relative, forward
// slashes, clean) and can never leave the run's prefix; sending a path
// again replaces the file.
func (h handlers) codeUpload(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	company := auth.FromContext(ctx).CompanyID
	run, err := runID(r)
	if err != nil {
		return err
	}
	path, err := sourcePath(r.URL.Query().Get("path"))
	if err != nil {
		return err
	}
	content, err := uploadedFile(r, MaxSourceBytes, "The source file")
	if err != nil {
		return err
	}
	if !sourcecode.IsText(content) {
		return httpapi.UploadError(httpapi.KindInvalid, "The source file is not text (it contains NUL bytes)")
	}
	budget := scans.SourceBudget{Files: MaxRunSources, Bytes: MaxRunSourceBytes}
	expires := h.now().Add(reportstore.SourceDays * 24 * time.Hour)
	err = h.store.Scans.ReserveSource(ctx, company, run, int64(len(content)), budget, expires)
	if errors.Is(err, scans.ErrBudget) {
		return httpapi.UploadError(httpapi.KindTooLarge,
			"run_id %s has reached its source upload limit of %d files or %s", run, MaxRunSources, size(MaxRunSourceBytes))
	}
	if err != nil {
		return err
	}
	if err := h.reports.Put(ctx, reportstore.SourceKey(company, run, path), content); err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok", "path": path})
}

// sourcePath is the uploaded file's path in the form findings store it, or
// a 400 saying why it cannot be one.
func sourcePath(raw string) (string, error) {
	if strings.TrimSpace(raw) == "" {
		return "", httpapi.UploadError(httpapi.KindInvalid, "Missing path")
	}
	p, problem := norm.Path(strings.TrimSpace(raw))
	switch problem {
	case norm.Absolute:
		return "", httpapi.UploadError(httpapi.KindInvalid, "path must be relative to the repository root")
	case norm.Outside:
		return "", httpapi.UploadError(httpapi.KindInvalid, "path must not leave the repository")
	case norm.TooLong:
		return "", httpapi.UploadError(httpapi.KindInvalid, "path is longer than %d bytes", norm.MaxPath)
	}
	if p == "" {
		return "", httpapi.UploadError(httpapi.KindInvalid, "path names no file")
	}
	return p, nil
}

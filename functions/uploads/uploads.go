// Package uploads serves what a CI client uploads for a scan run of a
// third-party scanner: the source files its report names, the scanner's
// report (which creates the scan run and its issues), the CI metadata and
// the repository's Git configuration.
package uploads

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/ingest"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/scanlife"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Body limits. A report is at most 64 MiB decompressed and 10 MiB as sent
// compressed (ingest.MaxReportBytes, ingest.MaxCompressedBytes; larger
// ones come in chunks); CI metadata (a few hundred environment variables)
// and a Git configuration are small, so their limits are tight.
const (
	MaxReportBytes    = ingest.MaxReportBytes
	MaxCIDataBytes    = 256 << 10
	MaxGitConfigBytes = 64 << 10
)

type handlers struct {
	store   Store
	life    scanlife.Store
	reports reportstore.Store
	opts    Options
	now     func() time.Time
}

// Options are the group's settings.
type Options struct {
	// PendingQuota bounds the bytes a company's unfinished chunked uploads
	// hold (see chunks.go): EnvPendingQuota, DefaultPendingQuota. It is at
	// least MaxReportBytes, so that a report of any size can be sent.
	PendingQuota int64
}

// EnvPendingQuota sets Options.PendingQuota, in MiB.
const EnvPendingQuota = "UPLOAD_PENDING_QUOTA_MIB"

// DefaultPendingQuota lets a company upload eight reports of the largest
// size in chunks at once (sixteen of 32 MiB, or any number of small ones).
const DefaultPendingQuota = 512 << 20

// OptionsFromEnv reads Options from the environment.
func OptionsFromEnv() (Options, error) {
	raw := strings.TrimSpace(os.Getenv(EnvPendingQuota))
	if raw == "" {
		return Options{PendingQuota: DefaultPendingQuota}, nil
	}
	mib, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || mib < MaxReportBytes>>20 || mib > 1<<30 {
		return Options{}, fmt.Errorf("%s must be a number of MiB from %d (the largest report) to %d", EnvPendingQuota, MaxReportBytes>>20, 1<<30)
	}
	return Options{PendingQuota: mib << 20}, nil
}

// New returns the group's http.Handler configured from the environment,
// for the processes that serve every group (the registry's): a
// configuration error ends the process with exit status 1 (config.Must).
func New(d config.Deps) http.Handler { return config.Must(FromEnv(d)) }

// FromEnv returns the group's http.Handler configured from the
// environment, or the configuration error that must stop the process.
func FromEnv(d config.Deps) (http.Handler, error) {
	o, err := OptionsFromEnv()
	if err != nil {
		return nil, fmt.Errorf("uploads: %w", err)
	}
	return Build(d, o)
}

// NewWithOptions is New with explicit options (config.Must over Build).
func NewWithOptions(d config.Deps, o Options) http.Handler { return config.Must(Build(d, o)) }

// Build returns the group's http.Handler with explicit options, or why
// they cannot serve: no report bucket, or a pending quota below the
// largest report.
func Build(d config.Deps, o Options) (http.Handler, error) {
	if d.Reports == nil {
		return nil, errors.New("uploads: no report bucket (config.Deps.Reports)")
	}
	if o.PendingQuota < MaxReportBytes {
		return nil, fmt.Errorf("uploads: a pending quota of %d bytes is below the largest report (%d)", o.PendingQuota, MaxReportBytes)
	}
	h := handlers{store: StoreOf(d.Store), life: scanlife.StoreOf(d.Store), reports: d.Reports, opts: o, now: d.Clock()}
	return d.Server.Group(routes.GroupUploads, map[string]httpapi.HandlerFunc{
		"POST /scan-upload":       h.scanUpload,
		"POST /code-upload":       h.codeUpload,
		"POST /ci-data-upload":    h.ciDataUpload,
		"POST /git-config-upload": h.gitConfigUpload,
	}), nil
}

// errNoScan is the spec's answer when no scan of the caller's company has
// the run id.
var errNoScan = &httpapi.Error{Status: http.StatusNotFound, Body: map[string]string{"status": "unable to find scan associated to this run id"}}

// runID reads the required `run_id` query parameter, a UUID (the client
// generates a v4 per run), in its canonical lower-case form.
func runID(r *http.Request) (string, error) {
	raw := strings.TrimSpace(r.URL.Query().Get("run_id"))
	if raw == "" {
		return "", httpapi.UploadError(httpapi.KindInvalid, "Missing run_id")
	}
	id, ok := schema.CanonicalUUID(raw)
	if !ok {
		return "", httpapi.UploadError(httpapi.KindInvalid, "run_id must be a UUID")
	}
	return id, nil
}

// readUpload reads a body of at most limit bytes; past it, 413 with the
// limit in the message.
func readUpload(r *http.Request, limit int64, what string) ([]byte, error) {
	body, err := httpapi.ReadBody(r, limit)
	var e *httpapi.Error
	if errors.As(err, &e) && e.Status == http.StatusRequestEntityTooLarge {
		return nil, httpapi.UploadError(httpapi.KindTooLarge, "%s exceeds the upload limit of %s", what, size(limit))
	}
	return body, err
}

func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// scanOfRun finds the caller's company's scan of a run, or errNoScan.
func (h handlers) scanOfRun(r *http.Request, companyID int64, run string) (scans.Scan, error) {
	sc, err := h.store.Scans.ScanByRunID(r.Context(), companyID, run)
	if errors.Is(err, ddb.ErrNotFound) {
		return scans.Scan{}, errNoScan
	}
	return sc, err
}

func ok(w http.ResponseWriter) error {
	return httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

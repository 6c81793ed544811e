package uploads

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/store/scans"
	"github.com/acme/codescan-api/shared/store/schema"
)

var errInvalidJSON = httpapi.UploadError(httpapi.KindInvalid, "Invalid JSON format")

// ciDataUpload stores the CI metadata of a scan run (replacing an earlier
// upload), secrets masked.
func (h handlers) ciDataUpload(w http.ResponseWriter, r *http.Request) error {
	company := auth.FromContext(r.Context()).CompanyID
	run, err := runID(r)
	if err != nil {
		return err
	}
	platform := strings.TrimSpace(r.URL.Query().Get("platform"))
	if utf8.RuneCountInString(platform) > maxNameLen {
		return httpapi.UploadError(httpapi.KindInvalid, "platform is longer than %d characters", maxNameLen)
	}
	body, err := readUpload(r, MaxCIDataBytes, "The CI metadata")
	if err != nil {
		return err
	}
	if err := httpapi.CheckOpaqueJSON(body); err != nil {
		if errors.Is(err, httpapi.ErrInvalidJSON) {
			return errInvalidJSON
		}
		return err
	}
	data, err := maskCIData(body)
	if err != nil {
		return errInvalidJSON
	}
	sc, err := h.scanOfRun(r, company, run)
	if err != nil {
		return err
	}
	if err := h.store.Scans.PutCIData(r.Context(), company, scans.CIData{ScanID: sc.ID, RunID: run, Platform: platform, Data: string(data)}); err != nil {
		return err
	}
	if err := h.recordPullRequest(r.Context(), company, sc.ID, data); err != nil {
		return err
	}
	return ok(w)
}

// recordPullRequest keeps on the scan the pull request its CI metadata
// names (pullrequest.FromCI), so the scan answers it, compares with its
// base branch and decorates it. The client sends the metadata after the
// report: when the scan is already complete, the decoration is asked for
// here (an outbox event, once per scan); otherwise its completion does.
func (h handlers) recordPullRequest(ctx context.Context, company int64, scanID string, data []byte) error {
	var vars map[string]any
	if json.Unmarshal(data, &vars) != nil {
		return nil
	}
	strs := make(map[string]string, len(vars))
	for k, v := range vars {
		if s, ok := v.(string); ok {
			strs[k] = s
		}
	}
	pr, found := pullrequest.FromCI(strs)
	if !found {
		return nil
	}
	sc, err := h.store.Scans.SetScanPullRequest(ctx, company, scanID, pr)
	if err != nil || sc.Status != scans.ScanComplete {
		return err
	}
	ev := schema.Event{ID: pullrequest.EventID(scanID), CompanyID: company, Type: pullrequest.EventType, CreatedAt: h.now(),
		Data: json.RawMessage(fmt.Sprintf(`{"scan_id":%q}`, scanID))}
	_, err = h.store.Ledger.RecordEventOnce(ctx, ev)
	return err
}

// gitConfigUpload reads the repository's Git configuration, and records its
// remote's canonical URL on the scan run and, when it has none, on the
// run's project. The configuration itself is not kept (it can hold
// credentials).
func (h handlers) gitConfigUpload(w http.ResponseWriter, r *http.Request) error {
	company := auth.FromContext(r.Context()).CompanyID
	run, err := runID(r)
	if err != nil {
		return err
	}
	text, err := gitConfigText(r)
	if err != nil {
		return err
	}
	remote, err := remoteOf(text)
	if err != nil {
		return httpapi.UploadError(httpapi.KindInvalid, "Invalid Git configuration: %v", err)
	}
	sc, err := h.scanOfRun(r, company, run)
	if err != nil {
		return err
	}
	if err := h.store.Scans.SetScanRepoURL(r.Context(), company, sc.ID, remote.URL); err != nil {
		return err
	}
	if err := h.store.Catalog.SetProjectRepoURLIfEmpty(r.Context(), company, sc.ProjectID, remote.URL); err != nil {
		return err
	}
	return ok(w)
}

// multipartOverhead is what a multipart envelope may add around the file.
const multipartOverhead = 16 << 10

// gitConfigText returns the uploaded configuration (see uploadedFile): it
// must be non-empty UTF-8 text of at most MaxGitConfigBytes.
func gitConfigText(r *http.Request) (string, error) {
	text, err := uploadedFile(r, MaxGitConfigBytes, "The Git configuration")
	if err != nil {
		return "", err
	}
	switch {
	case !utf8.Valid(text):
		return "", httpapi.UploadError(httpapi.KindInvalid, "The Git configuration is not UTF-8 text")
	case len(bytes.TrimSpace(text)) == 0:
		return "", httpapi.UploadError(httpapi.KindInvalid, "The Git configuration is empty")
	}
	return string(text), nil
}

// uploadedFile returns an uploaded file of at most limit bytes: the body
// itself, or, for `multipart/form-data` (what the current client sends),
// the part named `file`. Past the limit it is 413 naming what.
func uploadedFile(r *http.Request, limit int64, what string) ([]byte, error) {
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType != "multipart/form-data" {
		return readUpload(r, limit, what)
	}
	body, err := readUpload(r, limit+multipartOverhead, what)
	if err != nil {
		return nil, err
	}
	content, err := filePart(body, params["boundary"], limit)
	if err != nil {
		return nil, err
	}
	if int64(len(content)) > limit {
		return nil, httpapi.UploadError(httpapi.KindTooLarge, "%s exceeds the upload limit of %s", what, size(limit))
	}
	return content, nil
}

var errNoFilePart = httpapi.UploadError(httpapi.KindInvalid, `The multipart body has no part named "file"`)

// filePart returns the content of the part named `file` (at most one byte
// past limit, for the caller to report).
func filePart(body []byte, boundary string, limit int64) ([]byte, error) {
	if boundary == "" {
		return nil, httpapi.UploadError(httpapi.KindInvalid, "The multipart body has no boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, errNoFilePart
		}
		if err != nil {
			return nil, httpapi.UploadError(httpapi.KindInvalid, "The multipart body is malformed")
		}
		if part.FormName() == "file" {
			content, err := io.ReadAll(io.LimitReader(part, limit+1))
			if err != nil {
				return nil, httpapi.UploadError(httpapi.KindInvalid, "The multipart body is malformed")
			}
			return content, nil
		}
	}
}

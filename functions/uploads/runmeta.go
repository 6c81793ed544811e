package uploads

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store"
)

var errInvalidJSON = httpapi.UploadError(http.StatusBadRequest, "Invalid JSON format")

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
		return httpapi.UploadError(http.StatusBadRequest, "platform is longer than %d characters", maxNameLen)
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
	if err := h.store.PutCIData(r.Context(), company, store.CIData{ScanID: sc.ID, RunID: run, Platform: platform, Data: string(data)}); err != nil {
		return err
	}
	return ok(w)
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
		return httpapi.UploadError(http.StatusBadRequest, "Invalid Git configuration: %v", err)
	}
	sc, err := h.scanOfRun(r, company, run)
	if err != nil {
		return err
	}
	if err := h.store.SetScanRepoURL(r.Context(), company, sc.ID, remote.URL); err != nil {
		return err
	}
	if err := h.store.SetProjectRepoURLIfEmpty(r.Context(), company, sc.ProjectID, remote.URL); err != nil {
		return err
	}
	return ok(w)
}

// multipartOverhead is what a multipart envelope may add around the file.
const multipartOverhead = 16 << 10

// gitConfigText returns the uploaded configuration: the body itself
// (`text/plain`, as the spec says) or, for `multipart/form-data` (what the
// current client sends), the part named `file`. It must be non-empty UTF-8
// text of at most MaxGitConfigBytes.
func gitConfigText(r *http.Request) (string, error) {
	mediaType, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var text []byte
	if mediaType == "multipart/form-data" {
		body, err := readUpload(r, MaxGitConfigBytes+multipartOverhead, "The Git configuration")
		if err != nil {
			return "", err
		}
		if text, err = filePart(body, params["boundary"]); err != nil {
			return "", err
		}
	} else {
		body, err := readUpload(r, MaxGitConfigBytes, "The Git configuration")
		if err != nil {
			return "", err
		}
		text = body
	}
	switch {
	case len(text) > MaxGitConfigBytes:
		return "", httpapi.UploadError(http.StatusRequestEntityTooLarge, "The Git configuration exceeds the upload limit of %s", size(MaxGitConfigBytes))
	case !utf8.Valid(text):
		return "", httpapi.UploadError(http.StatusBadRequest, "The Git configuration is not UTF-8 text")
	case len(bytes.TrimSpace(text)) == 0:
		return "", httpapi.UploadError(http.StatusBadRequest, "The Git configuration is empty")
	}
	return string(text), nil
}

var errNoFilePart = httpapi.UploadError(http.StatusBadRequest, `The multipart body has no part named "file"`)

// filePart returns the content of the part named `file` (at most one byte
// past the limit, for the caller to report).
func filePart(body []byte, boundary string) ([]byte, error) {
	if boundary == "" {
		return nil, httpapi.UploadError(http.StatusBadRequest, "The multipart body has no boundary")
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, errNoFilePart
		}
		if err != nil {
			return nil, httpapi.UploadError(http.StatusBadRequest, "The multipart body is malformed")
		}
		if part.FormName() == "file" {
			content, err := io.ReadAll(io.LimitReader(part, MaxGitConfigBytes+1))
			if err != nil {
				return nil, httpapi.UploadError(http.StatusBadRequest, "The multipart body is malformed")
			}
			return content, nil
		}
	}
}

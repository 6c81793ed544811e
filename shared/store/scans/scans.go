// Package scans is the store's area of scans: a project branch's analyses,
// their lists and status (what ending one writes: FailScan, and
// CompletionItems, which findings' apply writes with the head's move),
// the markers of scans waiting for the ingester, the resumable upload runs
// and their quota, a scan's CI metadata and a run's source budget. What a
// scan found lives in findings, which builds on this area.
package scans

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/pullrequest"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Scans reads and writes scans and their uploads.
type Scans struct {
	t *ddb.Table
	l *ledger.Ledger
	d Deps
}

// Deps are what the scans need of other areas: the project's name a
// completed scan's events give (CompletionItems).
type Deps struct {
	Catalog interface {
		GetProject(ctx context.Context, companyID, projectID int64) (schema.Project, error)
	}
}

// New returns the area on a table, its ledger and the areas it reads.
func New(t *ddb.Table, l *ledger.Ledger, d Deps) *Scans { return &Scans{t: t, l: l, d: d} }

// Scan is one analysis of a project's branch: a scan of the platform's own
// engine or an uploaded third-party report (then RunID is the client's run
// identifier, which CI metadata and Git configuration uploads refer to).
type Scan struct {
	ddb.Key
	ID        string `dynamodbav:"id"` // uuid
	CompanyID int64  `dynamodbav:"company_id"`
	ProjectID int64  `dynamodbav:"project_id"`
	Branch    string `dynamodbav:"branch"`
	Engine    string `dynamodbav:"engine"`
	RunID     string `dynamodbav:"run_id,omitempty"` // uuid, third-party scans only
	RepoURL   string `dynamodbav:"repo_url,omitempty"`
	CreatedAt string `dynamodbav:"created_at"`
	// Uploaded reports only: the report's SHA-256 (a retried upload must
	// carry the same report) and what the client said of its CI.
	ReportSHA256 string `dynamodbav:"report_sha256,omitempty"`
	CI           bool   `dynamodbav:"ci,omitempty"`
	CIPlatform   string `dynamodbav:"ci_platform,omitempty"`
	// Status is ScanProcessing until its findings are all stored, then
	// ScanComplete, or ScanIncomplete with FailedReason and ScanErrors.
	Status       string      `dynamodbav:"status,omitempty"`
	FailedReason string      `dynamodbav:"failed_reason,omitempty"`
	ScanErrors   []ScanError `dynamodbav:"scan_errors,omitempty"`
	GitSHA       string      `dynamodbav:"git_sha,omitempty"`
	// Tool is the scanner whose findings the scan holds (identity and the
	// fixed lifecycle are per tool); Findings counts them.
	Tool     string `dynamodbav:"tool,omitempty"`
	Findings int    `dynamodbav:"findings,omitempty"`
	// Category is the upload's analysis category (a directory of a
	// monorepo, a language): the scan is the truth for its tool and
	// category on its branch. "" is the category of every scan before
	// categories, and of uploads that name none.
	Category string `dynamodbav:"category,omitempty"`
	// CompletedAt is when its findings were all stored.
	CompletedAt string `dynamodbav:"completed_at,omitempty"`
	// PullRequest is the pull request the run built, read from its CI
	// metadata; nil for a branch build.
	PullRequest *pullrequest.PullRequest `dynamodbav:"pull_request,omitempty"`
}

// Scan statuses, as the real client classifies them.
const (
	ScanProcessing = "processing"
	ScanComplete   = "complete"
	ScanIncomplete = "incomplete"
)

// ScanError is one problem met while processing a scan; Level "info" is not
// a failure.
type ScanError struct {
	ScanType string `dynamodbav:"scan_type" json:"scan_type"`
	Level    string `dynamodbav:"level" json:"level"`
	Location string `dynamodbav:"location" json:"location"`
	Message  string `dynamodbav:"message" json:"message"`
}

// Key is the key of a scan of a company.
func Key(companyID int64, scanID string) ddb.Key {
	return ddb.Key{PK: schema.CompanyPK(companyID), SK: schema.ScanSK(scanID)}
}

// scanRunKey is the look-up item of a run id inside a company. It is not a
// Scan: it only points at one.
func scanRunKey(companyID int64, runID string) ddb.Key {
	return ddb.Key{PK: schema.CompanyPK(companyID), SK: schema.ScanRunSK(runID)}
}

type scanRunRef struct {
	ddb.Key
	ScanID string `dynamodbav:"scan_id"`
}

// CreateScan stores a new scan. An empty ID gets a random uuid; CreatedAt
// defaults to now. A scan with a RunID also gets the run's look-up item, in
// the same transaction: a run id already used in the company is ddb.ErrConflict
// and nothing is written (a retried upload finds the first scan with
// ScanByRunID).
func (x *Scans) CreateScan(ctx context.Context, sc Scan) (Scan, error) {
	if sc.ID == "" {
		sc.ID = uuid.NewString()
	}
	id, ok := schema.CanonicalUUID(sc.ID)
	if !ok || sc.CompanyID == 0 || sc.ProjectID == 0 {
		return Scan{}, fmt.Errorf("scan needs a uuid id, a company and a project: %w", ddb.ErrInvalid)
	}
	sc.ID = id
	if sc.RunID != "" {
		run, ok := schema.CanonicalUUID(sc.RunID)
		if !ok {
			return Scan{}, fmt.Errorf("run id %q is not a uuid: %w", sc.RunID, ddb.ErrInvalid)
		}
		sc.RunID = run
	}
	if sc.CreatedAt == "" {
		sc.CreatedAt = x.t.Stamp()
	}
	sc.Key = Key(sc.CompanyID, sc.ID)
	items, err := x.scanListWrites(sc)
	if err != nil {
		return Scan{}, err
	}
	if sc.RunID != "" {
		ref, err := x.t.TxPutNew(scanRunRef{Key: scanRunKey(sc.CompanyID, sc.RunID), ScanID: sc.ID})
		if err != nil {
			return Scan{}, err
		}
		items = append(items, ref)
	}
	if awaitsIngester(sc) {
		marker, err := x.txProcessingMarker(sc)
		if err != nil {
			return Scan{}, err
		}
		items = append(items, marker)
	}
	if err := x.t.Transact(ctx, items); err != nil {
		return Scan{}, err
	}
	return sc, nil
}

// GetScan reads a scan of a company. An id that is not a uuid is ddb.ErrNotFound
// like any unknown id.
func (x *Scans) GetScan(ctx context.Context, companyID int64, scanID string) (Scan, error) {
	id, ok := schema.CanonicalUUID(scanID)
	if !ok {
		return Scan{}, ddb.ErrNotFound
	}
	var sc Scan
	err := x.t.GetItem(ctx, Key(companyID, id), &sc)
	return sc, err
}

// ScanByRunID finds the scan of a company created for a third-party run.
func (x *Scans) ScanByRunID(ctx context.Context, companyID int64, runID string) (Scan, error) {
	run, ok := schema.CanonicalUUID(runID)
	if !ok {
		return Scan{}, ddb.ErrNotFound
	}
	var ref scanRunRef
	if err := x.t.GetItem(ctx, scanRunKey(companyID, run), &ref); err != nil {
		return Scan{}, err
	}
	sc, err := x.GetScan(ctx, companyID, ref.ScanID)
	if errors.Is(err, ddb.ErrNotFound) {
		return Scan{}, fmt.Errorf("run %s points at missing scan %s", run, ref.ScanID)
	}
	return sc, err
}

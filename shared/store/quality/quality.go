// Package quality is the store's area of code-quality findings: a
// scan's, written in bulk and counted on write (internal/counted) per
// project and per scan and classification; read as a scan's list
// (filtered by classification), a project's list and a scan's directory
// of classifications.
package quality

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Quality reads and writes code-quality findings.
type Quality struct {
	t *ddb.Table
	l *ledger.Ledger
}

// New returns the area on a table and its ledger.
func New(t *ddb.Table, l *ledger.Ledger) *Quality { return &Quality{t: t, l: l} }

// Issue is a code quality finding of a scan. Its JSON form is the API's
// code quality issue.
type Issue struct {
	ddb.Key            `json:"-"`
	schema.OffsetKeys  `json:"-"`
	GSI1PK             string             `dynamodbav:"GSI1PK,omitempty" json:"-"`
	GSI1SK             string             `dynamodbav:"GSI1SK,omitempty" json:"-"`
	GSI2PK             string             `dynamodbav:"GSI2PK,omitempty" json:"-"`
	GSI2SK             string             `dynamodbav:"GSI2SK,omitempty" json:"-"`
	ID                 string             `dynamodbav:"id" json:"id"` // uuid
	CompanyID          int64              `dynamodbav:"company_id" json:"-"`
	ProjectID          int64              `dynamodbav:"project_id,omitempty" json:"-"`
	ScanID             string             `dynamodbav:"scan_id" json:"-"`
	Classification     Classification     `dynamodbav:"classification" json:"classification"`
	Urgency            string             `dynamodbav:"urgency" json:"urgency"`
	CreatedAt          string             `dynamodbav:"created_at" json:"created_at"`
	FirstDetectionDate string             `dynamodbav:"first_detection_date" json:"first_detection_date"`
	Status             string             `dynamodbav:"status" json:"status"`
	SLAStatus          string             `dynamodbav:"sla_status" json:"sla_status"`
	Location           Location           `dynamodbav:"location" json:"location"`
	AutoTriage         AutoTriage         `dynamodbav:"auto_triage" json:"auto_triage"`
	AutoFixSuggestion  *AutoFixSuggestion `dynamodbav:"auto_fix_suggestion" json:"auto_fix_suggestion"`
	AssignedTo         *Assignee          `dynamodbav:"assigned_to" json:"assigned_to"`
	Reachability       Reachability       `dynamodbav:"reachability" json:"reachability"`
}

// Classification is the rule class of a quality finding.
type Classification struct {
	ID          string `dynamodbav:"id" json:"id"`
	Name        string `dynamodbav:"name" json:"name"`
	Description string `dynamodbav:"description" json:"description"`
}

// Location is where a quality finding is.
type Location struct {
	File           File    `dynamodbav:"file" json:"file"`
	Project        Project `dynamodbav:"project" json:"project"`
	LineNumber     int     `dynamodbav:"line_number" json:"line_number"`
	SinkLineNumber int     `dynamodbav:"sink_line_number" json:"sink_line_number"`
}

// File is the file of a quality finding.
type File struct {
	Name     string `dynamodbav:"name" json:"name"`
	Language string `dynamodbav:"language" json:"language"`
	Path     string `dynamodbav:"path" json:"path"`
	GitHash  string `dynamodbav:"git_hash" json:"git_hash"`
}

// Project is the project and commit of a quality finding.
type Project struct {
	Name   string `dynamodbav:"name" json:"name"`
	Branch string `dynamodbav:"branch" json:"branch"`
	GitSHA string `dynamodbav:"git_sha" json:"git_sha"`
}

// AutoTriage is the automatic triage of a finding.
type AutoTriage struct {
	FalsePositiveDetection FalsePositiveDetection `dynamodbav:"false_positive_detection" json:"false_positive_detection"`
}

// FalsePositiveDetection is the verdict of the false positive detection.
type FalsePositiveDetection struct {
	Status    string `dynamodbav:"status" json:"status"`
	Reasoning string `dynamodbav:"reasoning" json:"reasoning"`
}

// AutoFixSuggestion is a proposed fix.
type AutoFixSuggestion struct {
	ID     string   `dynamodbav:"id" json:"id"` // uuid
	Status string   `dynamodbav:"status" json:"status"`
	Patch  FixPatch `dynamodbav:"patch" json:"patch"`
}

// FixPatch is the content of a proposed fix.
type FixPatch struct {
	Diff        string `dynamodbav:"diff" json:"diff"`
	Explanation string `dynamodbav:"explanation" json:"explanation"`
	FullCode    string `dynamodbav:"full_code" json:"full_code"`
}

// Assignee is the user a finding is assigned to.
type Assignee struct {
	ID    string `dynamodbav:"id" json:"id"`
	Email string `dynamodbav:"email" json:"email"`
	Name  string `dynamodbav:"name" json:"name"`
}

// Reachability says whether the code is reachable from endpoints.
type Reachability struct {
	IsReachable   bool `dynamodbav:"is_reachable" json:"is_reachable"`
	EndpointCount int  `dynamodbav:"endpoint_count" json:"endpoint_count"`
}

// A scan's quality findings are read three ways, newest first (inverted
// creation millis), ties by id:
//
//   - the scan's:    the item's key, PK C#<c>, SK QI#<scan>#<millis>#<id>; page
//     numbers by the Offset index (partition C#<c>#QI#<scan>);
//   - the project's: GSI1, C#<c>#QP#<project>, <millis>#<id>;
//   - the scan's of one classification: GSI2, C#<c>#QC#<scan>#<class key>,
//     <millis>#<id>;
//
// and counted on write (internal/counted): the project's total, and the scan's
// directory of classifications, one item per classification name
// (C#<c>#QDIR#<scan>, SK its class key) with the name and its count.
//
// The keys are built in schema/quality.go.

// scanList is a scan's list; view (the classification filter) binds its
// page tokens to the filter they were issued for.
func scanList(companyID int64, scanID, view string) page.List {
	return page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(schema.QualityScanPrefix(scanID)), Forward: true,
		OffsetPartition: schema.QualityScanOffsetPK(companyID, scanID), View: view}
}

// PutQualityIssues stores quality findings of a company's scans and counts
// them (per project, per scan and classification). An empty ID gets a
// random uuid, an empty CreatedAt now. Writing the same issue again
// replaces it. Scan ids must be canonical uuids (ErrInvalid).
func (x *Quality) PutQualityIssues(ctx context.Context, companyID int64, issues []Issue) error {
	byScan := map[string][]counted.Item{}
	var scans []string
	for _, q := range issues {
		if q.ID == "" {
			q.ID = uuid.NewString()
		}
		if q.CreatedAt == "" {
			q.CreatedAt = x.t.Stamp()
		}
		id, okID := schema.CanonicalUUID(q.ID)
		scan, okScan := schema.CanonicalUUID(q.ScanID)
		t, err := time.Parse(time.RFC3339, q.CreatedAt)
		if !okID || !okScan || err != nil {
			return fmt.Errorf("quality issue %q of scan %q at %q: %w", q.ID, q.ScanID, q.CreatedAt, ddb.ErrInvalid)
		}
		order := schema.NewestFirst(t.UnixMilli(), id)
		q.ID, q.ScanID, q.CompanyID = id, scan, companyID
		q.Key = ddb.Key{PK: schema.CompanyPK(companyID), SK: schema.QualityScanPrefix(scan) + order}
		q.GSI2PK, q.GSI2SK = schema.QualityClassPK(companyID, scan, q.Classification.Name), order
		q.OffsetKeys = schema.OffsetKeys{OffsetPK: scanList(companyID, scan, "").OffsetPartition, OffsetSK: q.SK}
		counts := []counted.Ref{{Key: ddb.Key{PK: schema.QualityDirPK(companyID, scan), SK: schema.QualityClassKey(q.Classification.Name)}, Label: q.Classification.Name}}
		if q.ProjectID != 0 {
			q.GSI1PK, q.GSI1SK = schema.QualityProjectPK(companyID, q.ProjectID), order
			counts = append(counts, counted.Ref{Key: schema.CountKey(companyID, schema.QualityProjectCount(q.ProjectID))})
		}
		if byScan[scan] == nil {
			scans = append(scans, scan)
		}
		byScan[scan] = append(byScan[scan], counted.Item{Key: q.Key, Build: func(map[string]types.AttributeValue) (any, []counted.Ref, error) {
			return q, counts, nil
		}})
	}
	for _, scan := range scans {
		if err := counted.Put(ctx, x.t, schema.CountJournalPK(companyID, scan), byScan[scan]); err != nil {
			return err
		}
	}
	return nil
}

package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/tabledef"
)

// QualityIssue is a code quality finding of a scan. Its JSON form is the
// API's code quality issue.
type QualityIssue struct {
	Key                `json:"-"`
	GSI1PK             string                `dynamodbav:"GSI1PK,omitempty" json:"-"`
	GSI1SK             string                `dynamodbav:"GSI1SK,omitempty" json:"-"`
	ID                 string                `dynamodbav:"id" json:"id"` // uuid
	CompanyID          int64                 `dynamodbav:"company_id" json:"-"`
	ProjectID          int64                 `dynamodbav:"project_id,omitempty" json:"-"`
	ScanID             string                `dynamodbav:"scan_id" json:"-"`
	Classification     QualityClassification `dynamodbav:"classification" json:"classification"`
	Urgency            string                `dynamodbav:"urgency" json:"urgency"`
	CreatedAt          string                `dynamodbav:"created_at" json:"created_at"`
	FirstDetectionDate string                `dynamodbav:"first_detection_date" json:"first_detection_date"`
	Status             string                `dynamodbav:"status" json:"status"`
	SLAStatus          string                `dynamodbav:"sla_status" json:"sla_status"`
	Location           QualityLocation       `dynamodbav:"location" json:"location"`
	AutoTriage         AutoTriage            `dynamodbav:"auto_triage" json:"auto_triage"`
	AutoFixSuggestion  *AutoFixSuggestion    `dynamodbav:"auto_fix_suggestion" json:"auto_fix_suggestion"`
	AssignedTo         *Assignee             `dynamodbav:"assigned_to" json:"assigned_to"`
	Reachability       QualityReachability   `dynamodbav:"reachability" json:"reachability"`
}

// QualityClassification is the rule class of a quality finding.
type QualityClassification struct {
	ID          string `dynamodbav:"id" json:"id"`
	Name        string `dynamodbav:"name" json:"name"`
	Description string `dynamodbav:"description" json:"description"`
}

// QualityLocation is where a quality finding is.
type QualityLocation struct {
	File           QualityFile    `dynamodbav:"file" json:"file"`
	Project        QualityProject `dynamodbav:"project" json:"project"`
	LineNumber     int            `dynamodbav:"line_number" json:"line_number"`
	SinkLineNumber int            `dynamodbav:"sink_line_number" json:"sink_line_number"`
}

// QualityFile is the file of a quality finding.
type QualityFile struct {
	Name     string `dynamodbav:"name" json:"name"`
	Language string `dynamodbav:"language" json:"language"`
	Path     string `dynamodbav:"path" json:"path"`
	GitHash  string `dynamodbav:"git_hash" json:"git_hash"`
}

// QualityProject is the project and commit of a quality finding.
type QualityProject struct {
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

// QualityReachability says whether the code is reachable from endpoints.
type QualityReachability struct {
	IsReachable   bool `dynamodbav:"is_reachable" json:"is_reachable"`
	EndpointCount int  `dynamodbav:"endpoint_count" json:"endpoint_count"`
}

// qualityPrefix holds a scan's quality issues, newest first, then by id.
func qualityPrefix(scanID string) string { return "QI#" + scanID + "#" }

// PutQualityIssues stores quality findings of a company's scans. An empty
// ID gets a random uuid, an empty CreatedAt now. Writing the same issue
// again replaces it. Scan ids must be canonical uuids (ErrInvalid).
func (s *Store) PutQualityIssues(ctx context.Context, companyID int64, issues []QualityIssue) error {
	items := make([]any, len(issues))
	for n, q := range issues {
		if q.ID == "" {
			q.ID = uuid.NewString()
		}
		if q.CreatedAt == "" {
			q.CreatedAt = now()
		}
		id, okID := CanonicalUUID(q.ID)
		scan, okScan := CanonicalUUID(q.ScanID)
		t, err := time.Parse(time.RFC3339, q.CreatedAt)
		if !okID || !okScan || err != nil {
			return fmt.Errorf("quality issue %q of scan %q at %q: %w", q.ID, q.ScanID, q.CreatedAt, ErrInvalid)
		}
		q.ID, q.ScanID, q.CompanyID = id, scan, companyID
		q.Key = Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("%s%013d#%s", qualityPrefix(scan), maxMillis-t.UnixMilli(), id)}
		if q.ProjectID != 0 {
			q.GSI1PK, q.GSI1SK = qualityProjectPK(companyID, q.ProjectID), fmt.Sprintf("%013d#%s", maxMillis-t.UnixMilli(), id)
		}
		items[n] = q
	}
	return s.batchPut(ctx, items)
}

// ListQualityIssues returns a scan's quality findings whose classification
// name contains classification (case-insensitive; "" for all), newest
// first, ties by id ascending. It reads every quality finding of the scan.
func (s *Store) ListQualityIssues(ctx context.Context, companyID int64, scanID, classification string) ([]QualityIssue, error) {
	var all []QualityIssue
	if err := s.queryAll(ctx, "", pkBeginsWith(CompanyPK(companyID), qualityPrefix(scanID)), true, &all); err != nil {
		return nil, err
	}
	want := strings.ToLower(classification)
	out := []QualityIssue{}
	for _, q := range all {
		if strings.Contains(strings.ToLower(q.Classification.Name), want) {
			out = append(out, q)
		}
	}
	return out, nil
}

// qualityProjectPK is the index partition of a project's quality findings,
// newest first.
func qualityProjectPK(companyID, projectID int64) string {
	return fmt.Sprintf("%s#QP#%d", CompanyPK(companyID), projectID)
}

// ProjectQualityIssues returns at most limit quality findings of a
// project's scans from offset, newest first (ties by id), and how many
// there are.
func (s *Store) ProjectQualityIssues(ctx context.Context, companyID, projectID int64, offset, limit int) ([]QualityIssue, int, error) {
	kc := expression.Key(tabledef.GSI1.PK).Equal(expression.Value(qualityProjectPK(companyID, projectID)))
	total, err := s.count(ctx, tabledef.GSI1.Name, kc)
	if err != nil {
		return nil, 0, err
	}
	items, err := s.queryWindow(ctx, tabledef.GSI1.Name, kc, nil, true, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	out := []QualityIssue{}
	err = attributevalue.UnmarshalListOfMaps(items, &out)
	return out, total, err
}

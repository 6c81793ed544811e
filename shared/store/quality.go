package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/tabledef"
)

// QualityIssue is a code quality finding of a scan. Its JSON form is the
// API's code quality issue.
type QualityIssue struct {
	Key                `json:"-"`
	OffsetKeys         `json:"-"`
	GSI1PK             string                `dynamodbav:"GSI1PK,omitempty" json:"-"`
	GSI1SK             string                `dynamodbav:"GSI1SK,omitempty" json:"-"`
	GSI2PK             string                `dynamodbav:"GSI2PK,omitempty" json:"-"`
	GSI2SK             string                `dynamodbav:"GSI2SK,omitempty" json:"-"`
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
func qualityPrefix(scanID string) string { return "QI#" + scanID + "#" }

func qualityClassPK(companyID int64, scanID, name string) string {
	return fmt.Sprintf("%s#QC#%s#%s", schema.CompanyPK(companyID), scanID, classKey(name))
}

func qualityDirPK(companyID int64, scanID string) string {
	return fmt.Sprintf("%s#QDIR#%s", schema.CompanyPK(companyID), scanID)
}

// classKey is a classification name's key: a digest, as names are free text.
func classKey(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:16])
}

func qualityProjectCount(projectID int64) string { return fmt.Sprintf("QUALITY#P%012d", projectID) }

// qualityList is a scan's list; view (the classification filter) binds its
// page tokens to the filter they were issued for.
func qualityList(companyID int64, scanID, view string) page.List {
	return page.List{Partition: schema.CompanyPK(companyID), Range: page.Prefix(qualityPrefix(scanID)), Forward: true,
		OffsetPartition: schema.CompanyPK(companyID) + "#QI#" + scanID, View: view}
}

// PutQualityIssues stores quality findings of a company's scans and counts
// them (per project, per scan and classification). An empty ID gets a
// random uuid, an empty CreatedAt now. Writing the same issue again
// replaces it. Scan ids must be canonical uuids (ErrInvalid).
func (s *Store) PutQualityIssues(ctx context.Context, companyID int64, issues []QualityIssue) error {
	byScan := map[string][]countedItem{}
	var scans []string
	for _, q := range issues {
		if q.ID == "" {
			q.ID = uuid.NewString()
		}
		if q.CreatedAt == "" {
			q.CreatedAt = s.t.Stamp()
		}
		id, okID := CanonicalUUID(q.ID)
		scan, okScan := CanonicalUUID(q.ScanID)
		t, err := time.Parse(time.RFC3339, q.CreatedAt)
		if !okID || !okScan || err != nil {
			return fmt.Errorf("quality issue %q of scan %q at %q: %w", q.ID, q.ScanID, q.CreatedAt, ErrInvalid)
		}
		order := fmt.Sprintf("%013d#%s", maxMillis-t.UnixMilli(), id)
		q.ID, q.ScanID, q.CompanyID = id, scan, companyID
		q.Key = Key{PK: schema.CompanyPK(companyID), SK: qualityPrefix(scan) + order}
		q.GSI2PK, q.GSI2SK = qualityClassPK(companyID, scan, q.Classification.Name), order
		q.OffsetKeys = OffsetKeys{OffsetPK: qualityList(companyID, scan, "").OffsetPartition, OffsetSK: q.SK}
		counts := []counterRef{{Key: Key{PK: qualityDirPK(companyID, scan), SK: classKey(q.Classification.Name)}, Label: q.Classification.Name}}
		if q.ProjectID != 0 {
			q.GSI1PK, q.GSI1SK = qualityProjectPK(companyID, q.ProjectID), order
			counts = append(counts, counterRef{Key: schema.CountKey(companyID, qualityProjectCount(q.ProjectID))})
		}
		if byScan[scan] == nil {
			scans = append(scans, scan)
		}
		byScan[scan] = append(byScan[scan], countedItem{Key: q.Key, Build: func(map[string]types.AttributeValue) (any, []counterRef, error) {
			return q, counts, nil
		}})
	}
	for _, scan := range scans {
		if err := s.putCounted(ctx, countJournalPK(companyID, scan), byScan[scan]); err != nil {
			return err
		}
	}
	return nil
}

// QualityClass is one classification of a scan's quality findings and how
// many it has.
type QualityClass struct {
	Name  string `dynamodbav:"label"`
	Count int    `dynamodbav:"n"`
}

// QualityClasses is the directory of a scan's classifications, by class key.
func (s *Store) QualityClasses(ctx context.Context, companyID int64, scanID string) ([]QualityClass, error) {
	var all []QualityClass
	if err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(qualityDirPK(companyID, scanID), ""), true, &all); err != nil {
		return nil, err
	}
	out := []QualityClass{}
	for _, c := range all {
		if c.Count > 0 {
			out = append(out, c)
		}
	}
	return out, nil
}

// ScanQualityIssues reads one page of a scan's quality findings whose
// classification name contains classification (case-insensitive; "" for
// all), newest first, ties by id ascending, and how many match. The
// scan's directory names the matching classifications and their counts;
// when some do not match, only the matching ones' findings are read (one
// range each, merged), so a page costs at most its size per matching
// classification, plus, by number, the matching findings before it.
func (s *Store) ScanQualityIssues(ctx context.Context, companyID int64, scanID, classification string, q PageQuery) ([]QualityIssue, PageResult, int, error) {
	view := strings.ToLower(classification)
	l := qualityList(companyID, scanID, view)
	classes, err := s.QualityClasses(ctx, companyID, scanID)
	if err != nil {
		return nil, PageResult{}, 0, err
	}
	var match []string
	total := 0
	for _, c := range classes {
		if strings.Contains(strings.ToLower(c.Name), view) {
			match = append(match, qualityClassPK(companyID, scanID, c.Name))
			total += c.Count
		}
	}
	out := []QualityIssue{}
	if len(match) == len(classes) {
		res, err := s.readPage(ctx, l, q, &out)
		return out, res, total, err
	}
	res := PageResult{Offset: q.Offset}
	after := ""
	if q.Token != "" {
		c, err := l.Open(q.Token)
		if err != nil {
			return nil, PageResult{}, 0, err
		}
		after, res.Offset = strings.TrimPrefix(c.Key[tabledef.SK], qualityPrefix(scanID)), c.Offset
		q.Offset = 0
	}
	items, err := s.mergeClasses(ctx, companyID, scanID, match, after, q.Offset, q.Limit)
	if err != nil {
		return nil, PageResult{}, 0, err
	}
	if err := attributevalue.UnmarshalListOfMaps(items, &out); err != nil {
		return nil, PageResult{}, 0, err
	}
	if n := len(out); n == q.Limit && res.Offset+n < total {
		last := out[n-1].Key
		if res.Next, err = l.Seal(page.Cursor{Key: map[string]string{tabledef.PK: last.PK, tabledef.SK: last.SK}, Offset: res.Offset + n}); err != nil {
			return nil, PageResult{}, 0, err
		}
	}
	return out, res, total, nil
}

// classRange is one classification's findings (GSI2) being merged.
type classRange struct {
	buf   []map[string]types.AttributeValue
	start map[string]types.AttributeValue
	done  bool
}

// mergeClasses reads, in the scan's order, the findings of the classes'
// GSI2 partitions after the sort key after ("" from the first), skipping
// skip of them and returning the next take.
func (s *Store) mergeClasses(ctx context.Context, companyID int64, scanID string, partitions []string, after string, skip, take int) ([]map[string]types.AttributeValue, error) {
	ranges := make([]classRange, len(partitions))
	if after != "" {
		for n, pk := range partitions {
			ranges[n].start = map[string]types.AttributeValue{
				tabledef.PK: &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)}, tabledef.SK: &types.AttributeValueMemberS{Value: qualityPrefix(scanID) + after},
				tabledef.GSI2.PK: &types.AttributeValueMemberS{Value: pk}, tabledef.GSI2.SK: &types.AttributeValueMemberS{Value: after},
			}
		}
	}
	var out []map[string]types.AttributeValue
	for left := skip + take; left > 0; left-- {
		var empty []int
		for n := range ranges {
			if len(ranges[n].buf) == 0 && !ranges[n].done {
				empty = append(empty, n)
			}
		}
		// A range's next read takes what the page may still need of it, in
		// reads of at most 100 while skipping.
		want := int32(min(left, 100))
		err := s.t.Parallel(ctx, len(empty), func(i int) error {
			r := &ranges[empty[i]]
			kc := expression.Key(tabledef.GSI2.PK).Equal(expression.Value(partitions[empty[i]]))
			items, next, err := s.t.QueryRaw(ctx, tabledef.GSI2.Name, kc, nil, true, want, r.start)
			r.buf, r.start, r.done = items, next, next == nil
			return err
		})
		if err != nil {
			return nil, err
		}
		first := -1
		for n, r := range ranges {
			if len(r.buf) > 0 && (first < 0 || sortKey(r.buf[0]) < sortKey(ranges[first].buf[0])) {
				first = n
			}
		}
		if first < 0 {
			break
		}
		it := ranges[first].buf[0]
		ranges[first].buf = ranges[first].buf[1:]
		if left <= take {
			out = append(out, it)
		}
	}
	return out, nil
}

func sortKey(item map[string]types.AttributeValue) string {
	v, _ := item[tabledef.GSI2.SK].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

// qualityProjectPK is the index partition of a project's quality findings,
// newest first.
func qualityProjectPK(companyID, projectID int64) string {
	return fmt.Sprintf("%s#QP#%d", schema.CompanyPK(companyID), projectID)
}

// ProjectQualityIssues reads one page of the quality findings of a
// project's scans, newest first (ties by id), and their number (a counter).
// A page by number reads the findings before it.
func (s *Store) ProjectQualityIssues(ctx context.Context, companyID, projectID int64, q PageQuery) ([]QualityIssue, PageResult, int, error) {
	out := []QualityIssue{}
	l := page.List{Index: tabledef.GSI1, Partition: qualityProjectPK(companyID, projectID), Forward: true}
	res, total, err := s.countedPage(ctx, companyID, l, q, &out, qualityProjectCount(projectID))
	return out, res, total, err
}

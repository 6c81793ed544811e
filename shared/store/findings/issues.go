package findings

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Urgencies are the issue urgency codes, most urgent first.
var Urgencies = []string{"CR", "HI", "ME", "LO"}

// Statuses are the issue statuses.
var Statuses = append(slices.Clip(ManualStatuses), Suppressed)

// ManualStatuses are the statuses people give issues: every status but
// Suppressed, which only a scan's report gives (see suppressed.go).
var ManualStatuses = []string{"open", "fixed", "false_positive", "accepted_risk", "fix_in_progress", "duplicate"}

// Suppressed is the status of a finding the scanned code suppresses.
const Suppressed = "suppressed"

// NoCWE is the CWE number stored for an issue that carries no CWE. It is
// not a MITRE id; the API shows it as the CWE id "unknown".
const NoCWE = 0

// Issue is a SAST finding of one tool on a project's branch: one item per
// (company, project, branch, tool, fingerprint) however many scans report
// it (see IssueID). Issues are written only through the store's issue write
// path (commitIssues: ApplyScan, UpdateIssue, TriageIssues, the triage
// area's writers and bulkload's seeding ones), which keeps the group
// counters exact and records status history in the same transactions.
// The index keys are set by the store:
//
//   - GSI1: the issues of one CWE,       sorted by project, branch, newest first, id
//   - GSI2: the issues of one file path, sorted the same way
//   - Offset: GSI1's keys again, keys only, so a page of a CWE's issues
//     reached by number skips the issues before it at ~100 bytes each
//   - Due:  open issues by urgency and SLA state, oldest first detection
//     first (see due.go; set at each write, as the status decides)
//
// so a drill-down into a group, for the whole company, a project or a
// project's branch, is one bounded range of one partition.
type Issue struct {
	ddb.Key
	GSI1PK            string `dynamodbav:"GSI1PK"`
	GSI1SK            string `dynamodbav:"GSI1SK"`
	GSI2PK            string `dynamodbav:"GSI2PK"`
	GSI2SK            string `dynamodbav:"GSI2SK"`
	DuePK             string `dynamodbav:"DuePK,omitempty"`
	DueSK             string `dynamodbav:"DueSK,omitempty"`
	schema.OffsetKeys `json:"-"`
	ID                string `dynamodbav:"id"` // uuid
	CompanyID         int64  `dynamodbav:"company_id"`
	ProjectID         int64  `dynamodbav:"project_id"`
	ProjectName       string `dynamodbav:"project_name"`      // project names never change
	ScanID            string `dynamodbav:"scan_id,omitempty"` // the scan that first reported it
	Branch            string `dynamodbav:"branch"`
	Tool              string `dynamodbav:"tool,omitempty"`
	Fingerprint       string `dynamodbav:"fingerprint,omitempty"`
	// Alias is the other id the finding answers to in a scan (see
	// aliases.go); the scan's membership keeps it, the issue does not.
	Alias    string `dynamodbav:"-" json:"-"`
	CWE      int    `dynamodbav:"cwe"` // NoCWE when the finding has none
	FilePath string `dynamodbav:"file_path"`
	Line     int    `dynamodbav:"line,omitempty"`
	Urgency  string `dynamodbav:"urgency"`
	Status   string `dynamodbav:"status"`
	RuleID   string `dynamodbav:"rule_id,omitempty"`
	Title    string `dynamodbav:"title,omitempty"`
	Message  string `dynamodbav:"message,omitempty"`
	Snippet  string `dynamodbav:"snippet,omitempty"`
	// Code is the source around the flagged lines (uploaded with the
	// report), CodeStart the number of its first line.
	CodeStart int    `dynamodbav:"code_start,omitempty"`
	Code      string `dynamodbav:"code,omitempty"`
	// Fix is the scanner's own fix as it applies to the file the run
	// uploaded (ingest.Sources), nil when there is none to show.
	Fix *Fix `dynamodbav:"fix,omitempty"`
	// CreatedAt is the first detection; a re-detection never changes it.
	CreatedAt string `dynamodbav:"created_at"`
	// LastSeenScanID is the last scan that reported the issue as of its
	// last transition; while the issue is not fixed, its branch's latest
	// scan of the tool (ScanHead) reports it too.
	LastSeenScanID string `dynamodbav:"last_seen_scan_id,omitempty"`
	FixedAt        string `dynamodbav:"fixed_at,omitempty"`
	FixedScanID    string `dynamodbav:"fixed_scan_id,omitempty"`
	ReopenCount    int    `dynamodbav:"reopen_count,omitempty"`
	Reason         string `dynamodbav:"reason,omitempty"`
	// UrgencyRuleID is the triage rule that set the urgency: scans then
	// keep it rather than show the scanner's (see rules.go).
	UrgencyRuleID string `dynamodbav:"urgency_rule_id,omitempty"`
	AssignedTo    int64  `dynamodbav:"assigned_to,omitempty"`
	// Decision is the triage decision the issue carries (see decided.go).
	Decision  schema.DecisionMark `dynamodbav:"decision,omitempty"`
	UpdatedAt string              `dynamodbav:"updated_at,omitempty"`
	// Terms are an accepted risk's end and owner, while the issue is
	// accepted_risk (see terms.go).
	schema.Terms
	// SLAStartedAt is when the SLA clock last restarted (an expired risk
	// acceptance reopened the issue); "" is the first detection.
	SLAStartedAt string `dynamodbav:"sla_started_at,omitempty"`
	// Version counts the item's writes; every update is conditional on it.
	Version int64 `dynamodbav:"ver"`
}

// Fix is what an issue shows of the scanner's fix: the unified diff of
// the uploaded file, what the scanner says of it, and the file as changed
// ("" when past its bound). fixdiff bounds the three together (24 KiB),
// so an issue item stays near 40 KB and a transaction of 100 within
// DynamoDB's 4 MB.
type Fix struct {
	Diff        string `dynamodbav:"diff,omitempty"`
	Explanation string `dynamodbav:"explanation,omitempty"`
	FullCode    string `dynamodbav:"full_code,omitempty"`
}

// sameFix tells whether two issues show the same fix (or both none).
func sameFix(a, b *Fix) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// IssueID is the identity of a finding: the same company, project, branch,
// tool and fingerprint always name the same issue, whichever scan reports
// it.
func IssueID(companyID, projectID int64, branch, tool, fingerprint string) string {
	return schema.IssueID(companyID, projectID, branch, tool, fingerprint)
}

// Issues live in 256 partitions per company (see schema.IssueKey): reading
// them all (EachIssue) pages through small partitions.
func issueKey(companyID int64, id string) ddb.Key { return schema.IssueKey(companyID, id) }

// ScopePrefix is the part of an issue's index sort key that a scope covers:
// everything for the company, then project, then branch.
func ScopePrefix(sc schema.Scope) string { return schema.IssueScopePrefix(sc) }

func (i *Issue) setKeys() error {
	t, err := time.Parse(time.RFC3339, i.CreatedAt)
	if err != nil {
		return fmt.Errorf("issue created_at %q: %w", i.CreatedAt, ddb.ErrInvalid)
	}
	sk := schema.IssueIndexSK(i.ProjectID, i.Branch, t.UnixMilli(), i.ID)
	i.Key = issueKey(i.CompanyID, i.ID)
	i.GSI1PK, i.GSI1SK = schema.IssueGroupPK(i.CompanyID, schema.ByCWE, strconv.Itoa(i.CWE)), sk
	i.GSI2PK, i.GSI2SK = schema.IssueGroupPK(i.CompanyID, schema.ByFile, i.FilePath), sk
	i.OffsetKeys = schema.OffsetKeys{OffsetPK: i.GSI1PK, OffsetSK: i.GSI1SK}
	return nil
}

// groupOf is the issue's group key in a dimension.
func (i *Issue) groupOf(dim schema.Dimension) string {
	if dim == schema.ByFile {
		return i.FilePath
	}
	return strconv.Itoa(i.CWE)
}

// Scopes are the three scopes every issue is counted in.
func (i *Issue) Scopes() []schema.Scope {
	return []schema.Scope{{}, {ProjectID: i.ProjectID}, {ProjectID: i.ProjectID, Branch: i.Branch}}
}

// groupRef names one counter: a group of a dimension in a scope.
type groupRef struct {
	scope schema.Scope
	dim   schema.Dimension
	group string
}

func (g groupRef) key(companyID int64) ddb.Key {
	return schema.CounterKey(companyID, g.scope, g.dim, g.group)
}

// EachCounter calls fn with every counter the issue counts in: its scope,
// dimension and group.
func (i *Issue) EachCounter(fn func(sc schema.Scope, dim schema.Dimension, group string)) {
	for _, sc := range i.Scopes() {
		for _, dim := range dimensions {
			fn(sc, dim, i.groupOf(dim))
		}
	}
}

// eachGroup is EachCounter with the counter's reference.
func (i *Issue) eachGroup(fn func(groupRef)) {
	i.EachCounter(func(sc schema.Scope, dim schema.Dimension, group string) {
		fn(groupRef{scope: sc, dim: dim, group: group})
	})
}

// Prepare validates a new issue and fills its id, company, time and keys
// (for the seeding writers of store/bulkload).
func (i *Issue) Prepare(companyID int64, at string) error {
	if i.ID == "" {
		i.ID = uuid.NewString()
	}
	id, ok := schema.CanonicalUUID(i.ID)
	switch {
	case !ok:
		return fmt.Errorf("issue id %q is not a uuid: %w", i.ID, ddb.ErrInvalid)
	case i.ProjectID <= 0 || i.Branch == "" || i.FilePath == "" || i.CWE < 0:
		return fmt.Errorf("issue %s needs a project, a branch, a file path and a CWE >= 0: %w", i.ID, ddb.ErrInvalid)
	case !slices.Contains(Urgencies, i.Urgency) || !slices.Contains(Statuses, i.Status):
		return fmt.Errorf("issue %s: urgency %q / status %q: %w", i.ID, i.Urgency, i.Status, ddb.ErrInvalid)
	}
	i.ID, i.CompanyID = id, companyID
	if i.CreatedAt == "" {
		i.CreatedAt = at
	}
	return i.setKeys()
}

// consistentIssue reads the issue's latest version (a write path decides on
// it).
func (x *Findings) consistentIssue(ctx context.Context, companyID int64, id string) (Issue, error) {
	cid, ok := schema.CanonicalUUID(id)
	if !ok {
		return Issue{}, ddb.ErrNotFound
	}
	got, err := x.issuesByID(ctx, companyID, []string{cid})
	if err != nil {
		return Issue{}, err
	}
	i, ok := got[cid]
	if !ok {
		return Issue{}, ddb.ErrNotFound
	}
	return i, nil
}

// issuesByID reads issues of a company with consistent reads, by id; ids
// not found are absent from the map.
func (x *Findings) issuesByID(ctx context.Context, companyID int64, ids []string) (map[string]Issue, error) {
	keys := make([]ddb.Key, len(ids))
	for n, id := range ids {
		keys[n] = issueKey(companyID, id)
	}
	got, err := x.t.BatchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Issue, len(got))
	for _, av := range got {
		var i Issue
		if err := attributevalue.UnmarshalMap(av, &i); err != nil {
			return nil, err
		}
		out[i.ID] = i
	}
	return out, nil
}

// IDs are the issues' ids, in order.
func IDs(issues []Issue) []string {
	out := make([]string, len(issues))
	for n := range issues {
		out[n] = issues[n].ID
	}
	return out
}

// CounterKeys are the counters of every group and scope the issues are
// in. Each counter's key is made once (a scan's issues share few of them).
func CounterKeys(companyID int64, lists ...[]Issue) []ddb.Key {
	seen := map[groupRef]bool{}
	var out []ddb.Key
	for _, issues := range lists {
		for n := range issues {
			issues[n].eachGroup(func(g groupRef) {
				if !seen[g] {
					seen[g] = true
					out = append(out, g.key(companyID))
				}
			})
		}
	}
	return out
}

package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/acme/codescan-api/shared/store/acceptances"
	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/trends"
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
// path (commitIssues: CreateIssues, ApplyScan, UpdateIssue, TriageIssues,
// SetIssueStatus, DeleteIssue), which keeps the group counters exact and
// records status history in the same transactions. The index keys are set
// by the store:
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
	Key
	GSI1PK      string `dynamodbav:"GSI1PK"`
	GSI1SK      string `dynamodbav:"GSI1SK"`
	GSI2PK      string `dynamodbav:"GSI2PK"`
	GSI2SK      string `dynamodbav:"GSI2SK"`
	DuePK       string `dynamodbav:"DuePK,omitempty"`
	DueSK       string `dynamodbav:"DueSK,omitempty"`
	OffsetKeys  `json:"-"`
	ID          string `dynamodbav:"id"` // uuid
	CompanyID   int64  `dynamodbav:"company_id"`
	ProjectID   int64  `dynamodbav:"project_id"`
	ProjectName string `dynamodbav:"project_name"`      // project names never change
	ScanID      string `dynamodbav:"scan_id,omitempty"` // the scan that first reported it
	Branch      string `dynamodbav:"branch"`
	Tool        string `dynamodbav:"tool,omitempty"`
	Fingerprint string `dynamodbav:"fingerprint,omitempty"`
	CWE         int    `dynamodbav:"cwe"` // NoCWE when the finding has none
	FilePath    string `dynamodbav:"file_path"`
	Line        int    `dynamodbav:"line,omitempty"`
	Urgency     string `dynamodbav:"urgency"`
	Status      string `dynamodbav:"status"`
	RuleID      string `dynamodbav:"rule_id,omitempty"`
	Title       string `dynamodbav:"title,omitempty"`
	Message     string `dynamodbav:"message,omitempty"`
	Snippet     string `dynamodbav:"snippet,omitempty"`
	// Code is the source around the flagged lines (uploaded with the
	// report), CodeStart the number of its first line.
	CodeStart int    `dynamodbav:"code_start,omitempty"`
	Code      string `dynamodbav:"code,omitempty"`
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
	// keep it rather than show the scanner's (see triageapply.go).
	UrgencyRuleID string `dynamodbav:"urgency_rule_id,omitempty"`
	AssignedTo    int64  `dynamodbav:"assigned_to,omitempty"`
	// Decision is the triage decision the issue carries (see decide.go).
	Decision  IssueDecision `dynamodbav:"decision,omitempty"`
	UpdatedAt string        `dynamodbav:"updated_at,omitempty"`
	// Terms are an accepted risk's end and owner, while the issue is
	// accepted_risk (see acceptance.go).
	acceptances.Terms
	// SLAStartedAt is when the SLA clock last restarted (an expired risk
	// acceptance reopened the issue); "" is the first detection.
	SLAStartedAt string `dynamodbav:"sla_started_at,omitempty"`
	// Version counts the item's writes; every update is conditional on it.
	Version int64 `dynamodbav:"ver"`
}

// IssueID is the identity of a finding: the same company, project, branch,
// tool and fingerprint always name the same issue, whichever scan reports
// it.
func IssueID(companyID, projectID int64, branch, tool, fingerprint string) string {
	return schema.IssueID(companyID, projectID, branch, tool, fingerprint)
}

// Issues live in 256 partitions per company (see schema.IssueKey): reading
// them all (EachIssue) pages through small partitions.
func issueKey(companyID int64, id string) Key { return schema.IssueKey(companyID, id) }

func issueShardPK(companyID int64, shard string) string { return schema.IssueShardPK(companyID, shard) }

func shortHash(s string, n int) string { return schema.ShortHash(s, n) }

func branchHash(branch string) string { return schema.BranchHash(branch) }
func pathHash(path string) string     { return shortHash(path, 32) }

// issueGroupPK is the index partition of one group's issues.
func issueGroupPK(companyID int64, dim Dimension, group string) string {
	if dim == ByFile {
		group = pathHash(group)
	}
	return fmt.Sprintf("%s#ISSUES#%s#%s", schema.CompanyPK(companyID), dim, group)
}

// scopePrefix is the part of an issue's index sort key that a scope covers:
// everything for the company, then project, then branch.
func scopePrefix(sc Scope) string {
	switch {
	case sc.ProjectID == 0:
		return ""
	case sc.Branch == "":
		return fmt.Sprintf("P%012d#", sc.ProjectID)
	}
	return fmt.Sprintf("P%012d#%s#", sc.ProjectID, branchHash(sc.Branch))
}

// maxMillis inverts creation times so that ascending keys are newest first.
const maxMillis = 9_999_999_999_999

func (i *Issue) setKeys() error {
	t, err := time.Parse(time.RFC3339, i.CreatedAt)
	if err != nil {
		return fmt.Errorf("issue created_at %q: %w", i.CreatedAt, ErrInvalid)
	}
	sk := fmt.Sprintf("%s%013d#%s", scopePrefix(Scope{ProjectID: i.ProjectID, Branch: i.Branch}), maxMillis-t.UnixMilli(), i.ID)
	i.Key = issueKey(i.CompanyID, i.ID)
	i.GSI1PK, i.GSI1SK = issueGroupPK(i.CompanyID, ByCWE, strconv.Itoa(i.CWE)), sk
	i.GSI2PK, i.GSI2SK = issueGroupPK(i.CompanyID, ByFile, i.FilePath), sk
	i.OffsetKeys = OffsetKeys{OffsetPK: i.GSI1PK, OffsetSK: i.GSI1SK}
	return nil
}

// groupOf is the issue's group key in a dimension.
func (i *Issue) groupOf(dim Dimension) string {
	if dim == ByFile {
		return i.FilePath
	}
	return strconv.Itoa(i.CWE)
}

// scopes are the three scopes every issue is counted in.
func (i *Issue) scopes() []Scope {
	return []Scope{{}, {ProjectID: i.ProjectID}, {ProjectID: i.ProjectID, Branch: i.Branch}}
}

// groupRef names one counter: a group of a dimension in a scope.
type groupRef struct {
	scope Scope
	dim   Dimension
	group string
}

func (g groupRef) key(companyID int64) Key { return counterKey(companyID, g.scope, g.dim, g.group) }

// eachGroup calls fn with every counter the issue counts in.
func (i *Issue) eachGroup(fn func(groupRef)) {
	for _, sc := range i.scopes() {
		for _, dim := range dimensions {
			fn(groupRef{scope: sc, dim: dim, group: i.groupOf(dim)})
		}
	}
}

// prepare validates a new issue and fills its id, company, time and keys.
func (i *Issue) prepare(companyID int64, at string) error {
	if i.ID == "" {
		i.ID = uuid.NewString()
	}
	id, ok := CanonicalUUID(i.ID)
	switch {
	case !ok:
		return fmt.Errorf("issue id %q is not a uuid: %w", i.ID, ErrInvalid)
	case i.ProjectID <= 0 || i.Branch == "" || i.FilePath == "" || i.CWE < 0:
		return fmt.Errorf("issue %s needs a project, a branch, a file path and a CWE >= 0: %w", i.ID, ErrInvalid)
	case !slices.Contains(Urgencies, i.Urgency) || !slices.Contains(Statuses, i.Status):
		return fmt.Errorf("issue %s: urgency %q / status %q: %w", i.ID, i.Urgency, i.Status, ErrInvalid)
	}
	i.ID, i.CompanyID = id, companyID
	if i.CreatedAt == "" {
		i.CreatedAt = at
	}
	return i.setKeys()
}

// GetIssue reads a SAST issue of a company.
func (s *Store) GetIssue(ctx context.Context, companyID int64, id string) (Issue, error) {
	cid, ok := CanonicalUUID(id)
	if !ok {
		return Issue{}, ErrNotFound
	}
	var i Issue
	err := s.t.GetItem(ctx, issueKey(companyID, cid), &i)
	return i, err
}

// CreateIssues stores new SAST issues of a company and counts them in their
// groups, through the issue write path. It is idempotent: an issue whose id
// already exists is left as it is and not counted again, so a retried batch
// with the same (deterministic) ids creates no duplicates. It returns how
// many issues were new. An empty ID gets a random uuid, an empty CreatedAt
// now; every issue needs a project id, a branch, a file path, a CWE (NoCWE
// for none), an urgency code of Urgencies and a status of Statuses, else
// ErrInvalid and nothing is written.
func (s *Store) CreateIssues(ctx context.Context, companyID int64, issues []Issue) (int, error) {
	batch := make([]Issue, len(issues))
	for n, i := range issues {
		if err := i.prepare(companyID, s.t.Stamp()); err != nil {
			return 0, err
		}
		batch[n] = i
	}
	created := 0
	err := s.t.Retrying(ctx, func() error {
		existing, err := s.issuesByID(ctx, companyID, issueIDs(batch))
		if err != nil {
			return err
		}
		var changes []issueChange
		for n := range batch {
			if _, ok := existing[batch[n].ID]; !ok {
				changes = append(changes, issueChange{after: &batch[n]})
			}
		}
		n, err := s.commitIssues(ctx, companyID, changes)
		created += n
		return err
	})
	if err != nil {
		return created, err
	}
	return created, s.settleCounters(ctx, companyID, counterKeysOf(companyID, batch))
}

// SetIssueStatus changes an issue's status (a change by no one in
// particular: the demo seed and tests); UpdateIssue is the API's.
func (s *Store) SetIssueStatus(ctx context.Context, companyID int64, id, status string) (Issue, error) {
	return s.UpdateIssue(ctx, companyID, id, IssueUpdate{Status: &status}, Actor{})
}

// DeleteIssue removes an issue and its counts in one transaction.
func (s *Store) DeleteIssue(ctx context.Context, companyID int64, id string) error {
	var before Issue
	err := s.t.Retrying(ctx, func() error {
		var err error
		if before, err = s.consistentIssue(ctx, companyID, id); err != nil {
			return err
		}
		_, err = s.commitIssues(ctx, companyID, []issueChange{{before: &before}})
		return err
	})
	if err != nil {
		return err
	}
	return s.settleCounters(ctx, companyID, counterKeysOf(companyID, []Issue{before}))
}

// consistentIssue reads the issue's latest version (a write path decides on
// it).
func (s *Store) consistentIssue(ctx context.Context, companyID int64, id string) (Issue, error) {
	cid, ok := CanonicalUUID(id)
	if !ok {
		return Issue{}, ErrNotFound
	}
	got, err := s.issuesByID(ctx, companyID, []string{cid})
	if err != nil {
		return Issue{}, err
	}
	i, ok := got[cid]
	if !ok {
		return Issue{}, ErrNotFound
	}
	return i, nil
}

// issuesByID reads issues of a company with consistent reads, by id; ids
// not found are absent from the map.
func (s *Store) issuesByID(ctx context.Context, companyID int64, ids []string) (map[string]Issue, error) {
	keys := make([]Key, len(ids))
	for n, id := range ids {
		keys[n] = issueKey(companyID, id)
	}
	got, err := s.t.BatchGet(ctx, keys)
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

func issueIDs(issues []Issue) []string {
	out := make([]string, len(issues))
	for n := range issues {
		out[n] = issues[n].ID
	}
	return out
}

// counterKeysOf are the counters of every group and scope the issues are
// in. Each counter's key is made once (a scan's issues share few of them).
func counterKeysOf(companyID int64, lists ...[]Issue) []Key {
	seen := map[groupRef]bool{}
	var out []Key
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

// Actor is who changed an issue: a user, or the scan whose upload did;
// RuleID names the triage rule the change applied.
type Actor struct {
	UserID int64  `dynamodbav:"user_id,omitempty" json:"user_id,omitempty"`
	ScanID string `dynamodbav:"scan_id,omitempty" json:"scan_id,omitempty"`
	RuleID string `dynamodbav:"rule_id,omitempty" json:"rule_id,omitempty"`
}

// issueChange is one issue's transition: before is nil for a new issue,
// after is nil for a deleted one. A status change records its history
// entry (by, reason) in the same transaction, and so do events, the
// change's own events beside issue_status_changed.
type issueChange struct {
	before, after *Issue
	by            Actor
	reason        string
	events        []Event
}

// commitIssues writes changes in transactions of at most maxTxItems items:
// each issue (conditional on the version it was computed from, or on not
// existing), its history entry and issue_status_changed event when its
// status changes, and atomic ADDs to the counters of the issues' groups,
// added up per transaction. first (audit entries) goes into the first
// transaction, so it commits with the first change. A failed condition (a
// concurrent writer of the same issue) is ErrConflict, and the
// transactions committed before it stay committed (each is exact on its
// own). It returns how many changes were committed. Callers settle the
// counters afterwards (settleCounters).
func (s *Store) commitIssues(ctx context.Context, companyID int64, changes []issueChange, first ...types.TransactWriteItem) (int, error) {
	at := s.t.Stamp()
	if err := s.settleTerms(ctx, companyID, changes, at); err != nil {
		return 0, err
	}
	for n := range changes {
		if a, b := changes[n].after, changes[n].before; a != nil {
			a.Version = 1
			if b != nil {
				a.Version, a.UpdatedAt = b.Version+1, at
			}
			if err := a.setDue(b); err != nil {
				return 0, err
			}
		}
	}
	// Neighbours share counters, so sorted chunks hold more issues each.
	slices.SortStableFunc(changes, func(a, b issueChange) int {
		x, y := a.issue(), b.issue()
		return cmp.Or(cmp.Compare(x.ProjectID, y.ProjectID), strings.Compare(x.Branch, y.Branch),
			cmp.Compare(x.CWE, y.CWE), strings.Compare(x.FilePath, y.FilePath))
	})
	fixSLA, err := s.fixSettings(ctx, companyID, changes)
	if err != nil {
		return 0, err
	}
	done := 0
	for n, chunk := range chunkChanges(companyID, changes, len(first)) {
		items, err := s.txChanges(companyID, chunk, at)
		if err != nil {
			return done, err
		}
		moves, err := s.txTrend(companyID, chunk, at, fixSLA)
		if err != nil {
			return done, err
		}
		items = append(items, moves...)
		if n == 0 {
			items = append(items, first...)
		}
		if err := s.t.Transact(ctx, items); err != nil {
			return done, err
		}
		done += len(chunk)
	}
	return done, nil
}

// issue is the issue a change is about.
func (c issueChange) issue() *Issue {
	if c.after != nil {
		return c.after
	}
	return c.before
}

// historyEntry reports whether the change records a status history entry:
// a status change, or a triage rule acting on a new issue.
func (c issueChange) historyEntry() bool {
	if c.before == nil {
		return c.after != nil && c.by.RuleID != ""
	}
	return c.after != nil && c.before.Status != c.after.Status
}

// txChanges is one transaction's items for chunk.
func (s *Store) txChanges(companyID int64, chunk []issueChange, at string) ([]types.TransactWriteItem, error) {
	var items []types.TransactWriteItem
	for n, c := range chunk {
		item, err := s.txIssue(c)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
		if c.historyEntry() {
			h := newHistory(companyID, c, at, n)
			item, err := s.t.TxPutNew(h)
			if err != nil {
				return nil, err
			}
			items = append(items, item)
			if c.before == nil { // a new issue's status is no change to announce
				continue
			}
			e, err := statusChanged(companyID, c)
			if err != nil {
				return nil, err
			}
			ev, err := s.l.TxEvent(e)
			if err != nil {
				return nil, err
			}
			items = append(items, ev)
		}
		for _, e := range c.events {
			ev, err := s.l.TxEvent(e)
			if err != nil {
				return nil, err
			}
			items = append(items, ev)
		}
	}
	for k, d := range counterDeltas(companyID, chunk) {
		item, err := s.txCounter(k, d)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}

// txIssue is the issue's own write, conditional on the state the change
// was computed from.
func (s *Store) txIssue(c issueChange) (types.TransactWriteItem, error) {
	if c.before == nil {
		return s.t.TxPutNew(c.after)
	}
	cond := expression.Name("ver").Equal(expression.Value(c.before.Version))
	if c.before.Version == 0 { // written before versions existed
		cond = expression.AttributeNotExists(expression.Name("ver"))
	}
	if c.after != nil {
		return s.t.TxPut(c.after, &cond)
	}
	return s.t.TxDelete(c.before.Key, cond)
}

// chunkChanges splits changes so that each chunk's transaction (its issues,
// their history entries and events and the distinct counters they touch)
// stays within DynamoDB's item limit, the first one leaving room for
// reserve more items.
func chunkChanges(companyID int64, changes []issueChange, reserve int) [][]issueChange {
	var chunks [][]issueChange
	var cur []issueChange
	counters := map[Key]bool{}
	items := reserve
	for _, c := range changes {
		issues := []Issue{*c.issue()}
		if c.before != nil && c.after != nil {
			issues = append(issues, *c.before)
		}
		keys := uniqueKeys(append(counterKeysOf(companyID, issues), trends.Keys(companyID, c.issue().ProjectID)...))
		need := 1 + 2*b2i(c.historyEntry()) + len(c.events)
		for k := range keys {
			if !counters[k] {
				need++
			}
		}
		if len(cur) > 0 && items+need > ddb.MaxTxItems {
			chunks = append(chunks, cur)
			cur, counters, items = nil, map[Key]bool{}, 0
			need = 1 + 2*b2i(c.historyEntry()) + len(c.events) + len(keys)
		}
		cur = append(cur, c)
		items += need
		for k := range keys {
			counters[k] = true
		}
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks
}

func uniqueKeys(keys []Key) map[Key]bool {
	out := map[Key]bool{}
	for _, k := range keys {
		out[k] = true
	}
	return out
}

// statusChanged is the issue_status_changed event of a status change. Its
// id names the issue's new version, so a retried transaction records the
// same event and every later change a new one.
func statusChanged(companyID int64, c issueChange) (Event, error) {
	var by *int64
	if c.by.UserID != 0 {
		by = &c.by.UserID
	}
	data, err := json.Marshal(map[string]any{
		"issue_id": c.after.ID, "project_id": c.after.ProjectID, "project_name": c.after.ProjectName,
		"title": c.after.Title, "previous_status": c.before.Status, "status": c.after.Status, "changed_by": by,
	})
	return Event{ID: fmt.Sprintf("issue_status_changed-%s-v%d", c.after.ID, c.after.Version), CompanyID: companyID,
		Type: "issue_status_changed", Data: data}, err
}

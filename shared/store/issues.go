package store

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
)

// Urgencies are the issue urgency codes, most urgent first.
var Urgencies = []string{"CR", "HI", "ME", "LO"}

// Statuses are the issue statuses.
var Statuses = []string{"open", "fixed", "false_positive", "accepted_risk", "fix_in_progress", "duplicate"}

// NoCWE is the CWE number stored for an issue that carries no CWE. It is
// not a MITRE id; the API shows it as the CWE id "unknown".
const NoCWE = 0

// Issue is a SAST finding of a project's branch. Issues are written only
// through CreateIssues, SetIssueStatus and DeleteIssue, which keep the group
// counters exact. The index keys are set by the store:
//
//   - GSI1: the issues of one CWE,       sorted by project, branch, newest first, id
//   - GSI2: the issues of one file path, sorted the same way
//
// so a drill-down into a group, for the whole company, a project or a
// project's branch, is one bounded range of one partition.
type Issue struct {
	Key
	GSI1PK      string `dynamodbav:"GSI1PK"`
	GSI1SK      string `dynamodbav:"GSI1SK"`
	GSI2PK      string `dynamodbav:"GSI2PK"`
	GSI2SK      string `dynamodbav:"GSI2SK"`
	ID          string `dynamodbav:"id"` // uuid
	CompanyID   int64  `dynamodbav:"company_id"`
	ProjectID   int64  `dynamodbav:"project_id"`
	ProjectName string `dynamodbav:"project_name"` // project names never change
	ScanID      string `dynamodbav:"scan_id,omitempty"`
	Branch      string `dynamodbav:"branch"`
	CWE         int    `dynamodbav:"cwe"` // NoCWE when the finding has none
	FilePath    string `dynamodbav:"file_path"`
	Line        int    `dynamodbav:"line,omitempty"`
	Urgency     string `dynamodbav:"urgency"`
	Status      string `dynamodbav:"status"`
	RuleID      string `dynamodbav:"rule_id,omitempty"`
	Title       string `dynamodbav:"title,omitempty"`
	CreatedAt   string `dynamodbav:"created_at"`
}

// Issues live in 256 partitions per company, picked by the first two hex
// digits of their uuid: a tenant's million issues never form one hot item
// collection, and reading them all (EachIssue) pages through small
// partitions.
func issueKey(companyID int64, id string) Key {
	return Key{PK: issueShardPK(companyID, id[:2]), SK: "ISSUE#" + id}
}

func issueShardPK(companyID int64, shard string) string {
	return CompanyPK(companyID) + "#ISSUES#" + shard
}

// shortHash is a fixed-width, key-safe stand-in for free text (branch names
// and paths may hold '#' and be long); n hex digits.
func shortHash(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:n]
}

func branchHash(branch string) string { return shortHash(branch, 16) }
func pathHash(path string) string     { return shortHash(path, 32) }

// issueGroupPK is the index partition of one group's issues.
func issueGroupPK(companyID int64, dim Dimension, group string) string {
	if dim == ByFile {
		group = pathHash(group)
	}
	return fmt.Sprintf("%s#ISSUES#%s#%s", CompanyPK(companyID), dim, group)
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

// prepare validates a new issue and fills its id, company, time and keys.
func (i *Issue) prepare(companyID int64) error {
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
		i.CreatedAt = now()
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
	err := s.getItem(ctx, issueKey(companyID, cid), &i)
	return i, err
}

// CreateIssues stores new SAST issues of a company and counts them in their
// groups, in transactions that write each issue together with its counters.
// It is idempotent: an issue whose id already exists is left as it is and
// not counted again, so a retried batch with the same (deterministic) ids
// creates no duplicates. It returns how many issues were new. An empty ID
// gets a random uuid, an empty CreatedAt now; every issue needs a project
// id, a branch, a file path, a CWE (NoCWE for none), an urgency code of
// Urgencies and a status of Statuses, else ErrInvalid and nothing is written.
func (s *Store) CreateIssues(ctx context.Context, companyID int64, issues []Issue) (int, error) {
	batch := make([]Issue, len(issues))
	for n, i := range issues {
		if err := i.prepare(companyID); err != nil {
			return 0, err
		}
		batch[n] = i
	}
	// Neighbours share counters, so sorted chunks hold more issues each.
	slices.SortStableFunc(batch, func(a, b Issue) int {
		return cmp.Or(cmp.Compare(a.ProjectID, b.ProjectID), strings.Compare(a.Branch, b.Branch),
			cmp.Compare(a.CWE, b.CWE), strings.Compare(a.FilePath, b.FilePath))
	})
	created := 0
	for _, chunk := range chunkIssues(batch) {
		n, err := s.createChunk(ctx, companyID, chunk)
		created += n
		if err != nil {
			return created, err
		}
	}
	return created, nil
}

// createChunk writes one transaction's worth of issues, retrying when a
// concurrent writer moved a counter first.
func (s *Store) createChunk(ctx context.Context, companyID int64, chunk []Issue) (int, error) {
	return retry(ctx, func() (int, error) {
		keys := make([]Key, len(chunk))
		for n := range chunk {
			keys[n] = chunk[n].Key
		}
		existing, err := s.batchGet(ctx, keys)
		if err != nil {
			return 0, err
		}
		var changes []issueChange
		for n := range chunk {
			if _, ok := existing[chunk[n].Key]; !ok {
				changes = append(changes, issueChange{after: &chunk[n]})
			}
		}
		if len(changes) == 0 {
			return 0, nil
		}
		return len(changes), s.commitIssues(ctx, companyID, changes)
	})
}

// SetIssueStatus changes an issue's status and moves its counts to the new
// status in the same transaction (conditional on the status it had).
func (s *Store) SetIssueStatus(ctx context.Context, companyID int64, id, status string) (Issue, error) {
	if !slices.Contains(Statuses, status) {
		return Issue{}, fmt.Errorf("status %q: %w", status, ErrInvalid)
	}
	var out Issue
	_, err := retry(ctx, func() (int, error) {
		before, err := s.consistentIssue(ctx, companyID, id)
		if err != nil {
			return 0, err
		}
		out = before
		if before.Status == status {
			return 0, nil
		}
		out.Status = status
		return 1, s.commitIssues(ctx, companyID, []issueChange{{before: &before, after: &out}})
	})
	return out, err
}

// DeleteIssue removes an issue and its counts in one transaction.
func (s *Store) DeleteIssue(ctx context.Context, companyID int64, id string) error {
	_, err := retry(ctx, func() (int, error) {
		before, err := s.consistentIssue(ctx, companyID, id)
		if err != nil {
			return 0, err
		}
		return 1, s.commitIssues(ctx, companyID, []issueChange{{before: &before}})
	})
	return err
}

// consistentIssue reads the issue's latest version (a write path decides on
// it).
func (s *Store) consistentIssue(ctx context.Context, companyID int64, id string) (Issue, error) {
	cid, ok := CanonicalUUID(id)
	if !ok {
		return Issue{}, ErrNotFound
	}
	k := issueKey(companyID, cid)
	got, err := s.batchGet(ctx, []Key{k})
	if err != nil {
		return Issue{}, err
	}
	av, ok := got[k]
	if !ok {
		return Issue{}, ErrNotFound
	}
	var i Issue
	err = attributevalue.UnmarshalMap(av, &i)
	return i, err
}

// issueChange is one issue's transition: before is nil for a new issue,
// after is nil for a deleted one.
type issueChange struct{ before, after *Issue }

// commitIssues writes changes and their counter updates in one transaction.
// Counters are read, recomputed and written back conditional on the version
// read, so a concurrent writer makes it fail with ErrConflict (and the
// caller retries) instead of losing a count.
func (s *Store) commitIssues(ctx context.Context, companyID int64, changes []issueChange) error {
	deltas := counterDeltas(companyID, changes)
	keys := make([]Key, 0, len(deltas))
	for k := range deltas {
		keys = append(keys, k)
	}
	current, err := s.batchGet(ctx, keys)
	if err != nil {
		return err
	}
	var items []types.TransactWriteItem
	for _, c := range changes {
		item, err := s.txIssue(c)
		if err != nil {
			return err
		}
		items = append(items, item)
	}
	summaries := map[Scope]map[Dimension]int{}
	for k, d := range deltas {
		var old *groupCounter
		if av, ok := current[k]; ok {
			old = &groupCounter{}
			if err := attributevalue.UnmarshalMap(av, old); err != nil {
				return err
			}
		}
		item, groupsDelta, err := s.txCounter(companyID, k, d, old)
		if err != nil {
			return err
		}
		items = append(items, item)
		if groupsDelta != 0 {
			if summaries[d.scope] == nil {
				summaries[d.scope] = map[Dimension]int{}
			}
			summaries[d.scope][d.dim] += groupsDelta
		}
	}
	for sc, byDim := range summaries {
		item, err := s.txSummary(companyID, sc, byDim)
		if err != nil {
			return err
		}
		items = append(items, item)
	}
	return s.transact(ctx, items)
}

// txIssue is the issue's own write, conditional on the state the change
// was computed from.
func (s *Store) txIssue(c issueChange) (types.TransactWriteItem, error) {
	if c.before == nil {
		return s.txPutNew(c.after)
	}
	cond := expression.Name("status").Equal(expression.Value(c.before.Status))
	if c.after != nil {
		return s.txPut(c.after, &cond)
	}
	return s.txDelete(c.before.Key, cond)
}

// chunkIssues splits issues so that each chunk's transaction (its issues,
// the distinct counters they touch and their scope summaries) stays within
// DynamoDB's item limit.
func chunkIssues(issues []Issue) [][]Issue {
	var chunks [][]Issue
	var cur []Issue
	counters := map[Key]bool{}
	scopes := map[Scope]bool{}
	for n := range issues {
		i := &issues[n]
		var newCounters []Key
		var newScopes []Scope
		for _, sc := range i.scopes() {
			if !scopes[sc] && !slices.Contains(newScopes, sc) {
				newScopes = append(newScopes, sc)
			}
			for _, dim := range dimensions {
				k := counterKey(i.CompanyID, sc, dim, i.groupOf(dim))
				if !counters[k] && !slices.Contains(newCounters, k) {
					newCounters = append(newCounters, k)
				}
			}
		}
		if len(cur)+1+len(counters)+len(newCounters)+len(scopes)+len(newScopes) > maxTxItems {
			chunks = append(chunks, cur)
			cur, counters, scopes = nil, map[Key]bool{}, map[Scope]bool{}
			newCounters, newScopes = nil, nil
			for _, sc := range i.scopes() {
				newScopes = append(newScopes, sc)
				for _, dim := range dimensions {
					newCounters = append(newCounters, counterKey(i.CompanyID, sc, dim, i.groupOf(dim)))
				}
			}
		}
		cur = append(cur, *i)
		for _, k := range newCounters {
			counters[k] = true
		}
		for _, sc := range newScopes {
			scopes[sc] = true
		}
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks
}

// maxAttempts bounds retries of a write that keeps meeting concurrent
// writers of the same counters.
const maxAttempts = 12

// retry runs write until it does not fail with ErrConflict, with jittered
// exponential back-off.
func retry(ctx context.Context, write func() (int, error)) (int, error) {
	for attempt := 0; ; attempt++ {
		n, err := write()
		if !errors.Is(err, ErrConflict) || attempt+1 == maxAttempts {
			return n, err
		}
		wait := time.Duration(min(5<<attempt, 400)) * time.Millisecond
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(wait/2 + rand.N(wait/2+1)):
		}
	}
}

package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// Group counters: for every scope an issue belongs to (the company, its
// project, its project's branch) and every dimension (CWE, file path), one
// item counts the group's issues per urgency and status. The write path
// keeps them exact (see commitIssues), so reading grouped counts never
// touches an issue:
//
//	counter  PK C#<company>  SK GRP#<dim>#<scope>#<group>
//	         GSI1PK C#<company>#GRP#<dim>#<scope>
//	         GSI1SK <10-digit inverted count>#<group sort key>
//	summary  PK C#<company>  SK SCOPE#<scope>   (non-empty groups per dimension;
//	         for a branch scope also GSI2PK C#<company>#BRANCH#<branch hash>, GSI2SK <scope>)
//
// A counter that drops to zero is deleted, so GSI1 lists exactly the
// non-empty groups of a scope, biggest first: page N is one bounded Query.

// Dimension is what issues are grouped by.
type Dimension string

// The two dimensions of GET /issues/groups.
const (
	ByCWE  Dimension = "cwe"
	ByFile Dimension = "file_path"
)

var dimensions = []Dimension{ByCWE, ByFile}

// Scope is a set of issues counted together: the whole company (zero
// value), one project (ProjectID), or one branch of a project (ProjectID and
// Branch).
type Scope struct {
	ProjectID int64
	Branch    string
}

func scopeID(sc Scope) string {
	switch {
	case sc.ProjectID == 0:
		return "C"
	case sc.Branch == "":
		return fmt.Sprintf("P%012d", sc.ProjectID)
	}
	return fmt.Sprintf("P%012dB%s", sc.ProjectID, branchHash(sc.Branch))
}

// Cells are counts per urgency and status, keyed "<urgency>/<status>";
// zero cells are left out.
type Cells map[string]int64

func cellKey(urgency, status string) string { return urgency + "/" + status }

// Total counts the issues whose urgency and status match (empty = any).
func (c Cells) Total(urgency, status string) int64 {
	var n int64
	for k, v := range c {
		u, s, _ := strings.Cut(k, "/")
		if (urgency == "" || u == urgency) && (status == "" || s == status) {
			n += v
		}
	}
	return n
}

// ByUrgency sums the cells per urgency code (every code present).
func (c Cells) ByUrgency() map[string]int64 {
	out := map[string]int64{}
	for _, u := range Urgencies {
		out[u] = c.Total(u, "")
	}
	return out
}

// ByStatus sums the cells per status (every status present).
func (c Cells) ByStatus() map[string]int64 {
	out := map[string]int64{}
	for _, s := range Statuses {
		out[s] = c.Total("", s)
	}
	return out
}

// GroupCount is one group's counts in a scope (or several scopes merged).
type GroupCount struct {
	Dim   Dimension `dynamodbav:"dim"`
	Group string    `dynamodbav:"group"` // CWE number ("0" is NoCWE) or file path
	Count int64     `dynamodbav:"issue_count"`
	Cells Cells     `dynamodbav:"cells"`
}

type groupCounter struct {
	Key
	GSI1PK string `dynamodbav:"GSI1PK"`
	GSI1SK string `dynamodbav:"GSI1SK"`
	GroupCount
	Version int64 `dynamodbav:"ver"`
}

// groupSortKey orders groups of equal count: CWE number ascending (NoCWE
// first), file path ascending (byte order; paths too long for a key are
// cut and completed by their hash).
func groupSortKey(dim Dimension, group string) string {
	if dim == ByCWE {
		n, _ := strconv.Atoi(group)
		return fmt.Sprintf("%07d", n)
	}
	if len(group) > 900 {
		return group[:900] + "#" + pathHash(group)
	}
	return group
}

func counterKey(companyID int64, sc Scope, dim Dimension, group string) Key {
	g := groupSortKey(dim, group)
	if dim == ByFile {
		g = pathHash(group)
	}
	return Key{PK: CompanyPK(companyID), SK: fmt.Sprintf("GRP#%s#%s#%s", dim, scopeID(sc), g)}
}

func counterIndexPK(companyID int64, sc Scope, dim Dimension) string {
	return fmt.Sprintf("%s#GRP#%s#%s", CompanyPK(companyID), dim, scopeID(sc))
}

// maxCount inverts counts so that ascending index keys are biggest first.
const maxCount = 9_999_999_999

// newCounter is the counter item of a group holding cells (never empty).
func newCounter(companyID int64, sc Scope, dim Dimension, group string, cells Cells, version int64) groupCounter {
	count := cells.Total("", "")
	return groupCounter{
		Key:        counterKey(companyID, sc, dim, group),
		GSI1PK:     counterIndexPK(companyID, sc, dim),
		GSI1SK:     fmt.Sprintf("%010d#%s", maxCount-count, groupSortKey(dim, group)),
		GroupCount: GroupCount{Dim: dim, Group: group, Count: count, Cells: cells},
		Version:    version,
	}
}

type counterDelta struct {
	scope Scope
	dim   Dimension
	group string
	cells Cells
}

// counterDeltas adds up what changes do to every counter they touch;
// counters left unchanged are dropped.
func counterDeltas(companyID int64, changes []issueChange) map[Key]*counterDelta {
	out := map[Key]*counterDelta{}
	add := func(i *Issue, n int64) {
		for _, sc := range i.scopes() {
			for _, dim := range dimensions {
				k := counterKey(companyID, sc, dim, i.groupOf(dim))
				d := out[k]
				if d == nil {
					d = &counterDelta{scope: sc, dim: dim, group: i.groupOf(dim), cells: Cells{}}
					out[k] = d
				}
				d.cells[cellKey(i.Urgency, i.Status)] += n
			}
		}
	}
	for _, c := range changes {
		if c.before != nil {
			add(c.before, -1)
		}
		if c.after != nil {
			add(c.after, 1)
		}
	}
	for k, d := range out {
		maps.DeleteFunc(d.cells, func(_ string, v int64) bool { return v == 0 })
		if len(d.cells) == 0 {
			delete(out, k)
		}
	}
	return out
}

// txCounter applies d to the counter read as old (nil when absent): a put
// or a delete conditional on the version read. groups is +1 when the group
// appears in its scope, -1 when it disappears.
func (s *Store) txCounter(companyID int64, k Key, d *counterDelta, old *groupCounter) (item types.TransactWriteItem, groups int, err error) {
	cells := Cells{}
	cond := expression.AttributeNotExists(expression.Name(tabledef.PK))
	version := int64(1)
	if old != nil {
		maps.Copy(cells, old.Cells)
		cond = expression.Name("ver").Equal(expression.Value(old.Version))
		version = old.Version + 1
	}
	for c, n := range d.cells {
		cells[c] += n
		switch {
		case cells[c] < 0:
			return item, 0, fmt.Errorf("counter %s cell %s would go negative", k.SK, c)
		case cells[c] == 0:
			delete(cells, c)
		}
	}
	switch {
	case len(cells) == 0:
		item, err = s.txDelete(k, cond)
		return item, -1, err
	case old == nil:
		groups = 1
	}
	item, err = s.txPut(newCounter(companyID, d.scope, d.dim, d.group, cells, version), &cond)
	return item, groups, err
}

// scopeSummary counts a scope's non-empty groups per dimension. A branch
// scope's summary is also indexed by branch (GSI2), so a branch filter finds
// the projects that have issues on it.
type scopeSummary struct {
	Key
	GSI2PK     string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK     string `dynamodbav:"GSI2SK,omitempty"`
	ProjectID  int64  `dynamodbav:"project_id,omitempty"`
	Branch     string `dynamodbav:"branch,omitempty"`
	GroupsCWE  int64  `dynamodbav:"groups_cwe"`
	GroupsFile int64  `dynamodbav:"groups_file_path"`
}

func summaryKey(companyID int64, sc Scope) Key {
	return Key{PK: CompanyPK(companyID), SK: "SCOPE#" + scopeID(sc)}
}

func branchIndexPK(companyID int64, branch string) string {
	return CompanyPK(companyID) + "#BRANCH#" + branchHash(branch)
}

// txSummary adds groups (per dimension) to a scope's summary.
func (s *Store) txSummary(companyID int64, sc Scope, groups map[Dimension]int) (types.TransactWriteItem, error) {
	upd := expression.Add(expression.Name("groups_cwe"), expression.Value(groups[ByCWE])).
		Add(expression.Name("groups_file_path"), expression.Value(groups[ByFile]))
	if sc.ProjectID != 0 {
		upd = upd.Set(expression.Name("project_id"), expression.Value(sc.ProjectID))
	}
	if sc.Branch != "" {
		upd = upd.Set(expression.Name("branch"), expression.Value(sc.Branch)).
			Set(expression.Name(tabledef.GSI2.PK), expression.Value(branchIndexPK(companyID, sc.Branch))).
			Set(expression.Name(tabledef.GSI2.SK), expression.Value(scopeID(sc)))
	}
	return s.txUpdate(summaryKey(companyID, sc), upd, nil)
}

// GroupsPage returns at most limit groups of one scope starting at offset,
// in the total order of GET /issues/groups: issue count descending, then
// group key ascending (see groupSortKey); and the scope's number of
// non-empty groups. It reads one summary item and offset+limit counters,
// however many issues the scope holds.
func (s *Store) GroupsPage(ctx context.Context, companyID int64, sc Scope, dim Dimension, offset, limit int) ([]GroupCount, int64, error) {
	var sum scopeSummary
	err := s.getItem(ctx, summaryKey(companyID, sc), &sum)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, 0, err
	}
	total := sum.GroupsCWE
	if dim == ByFile {
		total = sum.GroupsFile
	}
	if int64(offset) >= total {
		return []GroupCount{}, total, nil
	}
	kc := expression.Key(tabledef.GSI1.PK).Equal(expression.Value(counterIndexPK(companyID, sc, dim)))
	items, err := s.queryWindow(ctx, tabledef.GSI1.Name, kc, nil, true, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	out := []GroupCount{}
	err = attributevalue.UnmarshalListOfMaps(items, &out)
	return out, total, err
}

// ScopeGroups returns every non-empty group of a scope, in group key order.
// Its cost grows with the scope's groups, not its issues.
func (s *Store) ScopeGroups(ctx context.Context, companyID int64, sc Scope, dim Dimension) ([]GroupCount, error) {
	out := []GroupCount{}
	err := s.queryAll(ctx, "", pkBeginsWith(CompanyPK(companyID), fmt.Sprintf("GRP#%s#%s#", dim, scopeID(sc))), true, &out)
	return out, err
}

// GroupCounts returns one group's counts in each scope (zero counts for a
// scope where the group is empty), in the order of scopes.
func (s *Store) GroupCounts(ctx context.Context, companyID int64, scopes []Scope, dim Dimension, group string) ([]GroupCount, error) {
	keys := make([]Key, len(scopes))
	for n, sc := range scopes {
		keys[n] = counterKey(companyID, sc, dim, group)
	}
	got, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]GroupCount, len(scopes))
	for n, k := range keys {
		out[n] = GroupCount{Dim: dim, Group: group, Cells: Cells{}}
		if av, ok := got[k]; ok {
			if err := attributevalue.UnmarshalMap(av, &out[n]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// MergedGroups adds up the groups of several scopes and sorts them in the
// total order of GroupsPage. It reads every group of every scope (a few
// scopes at a time), so its cost grows with the scopes and their groups,
// never with their issues.
func (s *Store) MergedGroups(ctx context.Context, companyID int64, scopes []Scope, dim Dimension) ([]GroupCount, error) {
	lists, err := s.scopesGroups(ctx, companyID, scopes, dim)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*GroupCount{}
	for _, l := range lists {
		for _, g := range l {
			m := byKey[g.Group]
			if m == nil {
				m = &GroupCount{Dim: g.Dim, Group: g.Group, Cells: Cells{}}
				byKey[g.Group] = m
			}
			m.Count += g.Count
			for c, n := range g.Cells {
				m.Cells[c] += n
			}
		}
	}
	out := make([]GroupCount, 0, len(byKey))
	for _, g := range byKey {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b GroupCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(groupSortKey(a.Dim, a.Group), groupSortKey(b.Dim, b.Group))
	})
	return out, nil
}

// scopeReaders bounds the concurrent reads of scopesGroups.
const scopeReaders = 8

// scopesGroups reads ScopeGroups of every scope, in the order of scopes.
func (s *Store) scopesGroups(ctx context.Context, companyID int64, scopes []Scope, dim Dimension) ([][]GroupCount, error) {
	out := make([][]GroupCount, len(scopes))
	errs := make([]error, len(scopes))
	sem := make(chan struct{}, scopeReaders)
	var wg sync.WaitGroup
	for n, sc := range scopes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[n], errs[n] = s.ScopeGroups(ctx, companyID, sc, dim)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// BranchProjects returns, ascending, the ids of a company's projects that
// have issues on branch. Its cost grows with those projects only.
func (s *Store) BranchProjects(ctx context.Context, companyID int64, branch string) ([]int64, error) {
	var sums []scopeSummary
	kc := expression.Key(tabledef.GSI2.PK).Equal(expression.Value(branchIndexPK(companyID, branch)))
	if err := s.queryAll(ctx, tabledef.GSI2.Name, kc, true, &sums); err != nil {
		return nil, err
	}
	var out []int64
	for _, sum := range sums {
		// A branch whose issues are all deleted keeps its summary at zero;
		// the hash stands in for the name, so the name is checked too.
		if sum.GroupsCWE > 0 && sum.Branch == branch {
			out = append(out, sum.ProjectID)
		}
	}
	return out, nil
}

// maxPageItems bounds one Query request of queryWindow; maxWindow asks
// queryWindow for every match.
const (
	maxPageItems = 1000
	maxWindow    = math.MaxInt32
)

// queryWindow reads the matches of a key condition (and filter) from skip
// on, at most take of them, following pages as needed. Items skipped are
// read too: its cost grows with skip + take.
func (s *Store) queryWindow(ctx context.Context, index string, kc expression.KeyConditionBuilder, filter *expression.ConditionBuilder,
	forward bool, skip, take int) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	var start map[string]types.AttributeValue
	for len(out) < take {
		limit := int32(min(skip+take-len(out), maxPageItems))
		if filter != nil {
			limit = max(limit, 100) // Limit counts items before the filter
		}
		items, next, err := s.queryRaw(ctx, index, kc, filter, forward, limit, start)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			switch {
			case skip > 0:
				skip--
			case len(out) < take:
				out = append(out, it)
			}
		}
		if next == nil {
			break
		}
		start = next
	}
	return out, nil
}

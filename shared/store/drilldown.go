package store

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/tabledef"
)

// IssueFilter selects the issues of the drill-down (GET /issues).
type IssueFilter struct {
	// Scopes the issues come from, in the order they are listed (callers
	// give ascending project ids); none means the whole company.
	Scopes   []Scope
	CWE      *int   // one CWE (NoCWE for issues without one)
	FilePath string // one exact file path
	Urgency  string // one urgency code
	Status   string // one status
}

// segment is one run of the result: a scope's range of one group's index
// partition, with its number of matches when the counters know it.
type segment struct {
	index      tabledef.Index
	pk, prefix string
	count      int64
}

// ListIssues returns at most limit issues of f from offset, and how many
// match in all. The total comes from the group counters, so it always
// equals the sum of the matching groups' counts. The total order is: CWE
// ascending (NoCWE first) unless f names a CWE or a file; then the order of
// f.Scopes; then project, branch, newest first, issue id.
//
// Reads: one counter per scope (a scope's CWE counters when no group is
// named), then the page itself; issues before the page inside the first
// segment read are read too. A filter naming both a CWE and a file has no
// counter: it reads the file's issues of the scopes to count them.
func (s *Store) ListIssues(ctx context.Context, companyID int64, f IssueFilter, offset, limit int) ([]Issue, int64, error) {
	scopes := f.Scopes
	if len(scopes) == 0 {
		scopes = []Scope{{}}
	}
	var filter []expression.ConditionBuilder
	if f.Urgency != "" {
		filter = append(filter, expression.Name("urgency").Equal(expression.Value(f.Urgency)))
	}
	if f.Status != "" {
		filter = append(filter, expression.Name("status").Equal(expression.Value(f.Status)))
	}
	var segs []segment
	var err error
	switch {
	case f.FilePath != "" && f.CWE != nil:
		filter = append(filter, expression.Name("cwe").Equal(expression.Value(*f.CWE)))
		return s.listUncounted(ctx, companyID, scopes, f.FilePath, and(filter), offset, limit)
	case f.FilePath != "":
		segs, err = s.groupSegments(ctx, companyID, scopes, ByFile, f.FilePath, f)
	case f.CWE != nil:
		segs, err = s.groupSegments(ctx, companyID, scopes, ByCWE, strconv.Itoa(*f.CWE), f)
	default:
		segs, err = s.cweSegments(ctx, companyID, scopes, f)
	}
	if err != nil {
		return nil, 0, err
	}
	var total int64
	for _, sg := range segs {
		total += sg.count
	}
	out := []Issue{}
	skip := int64(offset)
	for _, sg := range segs {
		if len(out) == limit {
			break
		}
		if sg.count <= skip {
			skip -= sg.count
			continue
		}
		items, err := s.queryWindow(ctx, sg.index.Name, sg.keyCondition(), and(filter), true, int(skip), int(min(int64(limit-len(out)), sg.count-skip)))
		if err != nil {
			return nil, 0, err
		}
		skip = 0
		var page []Issue
		if err := attributevalue.UnmarshalListOfMaps(items, &page); err != nil {
			return nil, 0, err
		}
		out = append(out, page...)
	}
	return out, total, nil
}

func (sg segment) keyCondition() expression.KeyConditionBuilder {
	kc := expression.Key(sg.index.PK).Equal(expression.Value(sg.pk))
	if sg.prefix != "" {
		kc = kc.And(skPrefix(sg.index.SK, sg.prefix))
	}
	return kc
}

func and(conds []expression.ConditionBuilder) *expression.ConditionBuilder {
	switch len(conds) {
	case 0:
		return nil
	case 1:
		return &conds[0]
	}
	c := expression.And(conds[0], conds[1], conds[2:]...)
	return &c
}

// indexOf is the index holding the issues of one group of dim.
func indexOf(dim Dimension) tabledef.Index {
	if dim == ByFile {
		return tabledef.GSI2
	}
	return tabledef.GSI1
}

// groupSegments are one group's ranges in each scope.
func (s *Store) groupSegments(ctx context.Context, companyID int64, scopes []Scope, dim Dimension, group string, f IssueFilter) ([]segment, error) {
	counts, err := s.GroupCounts(ctx, companyID, scopes, dim, group)
	if err != nil {
		return nil, err
	}
	segs := make([]segment, len(scopes))
	for n, sc := range scopes {
		segs[n] = segment{index: indexOf(dim), pk: issueGroupPK(companyID, dim, group),
			prefix: scopePrefix(sc), count: counts[n].Cells.Total(f.Urgency, f.Status)}
	}
	return segs, nil
}

// cweSegments are every CWE group's ranges in each scope, CWE by CWE.
func (s *Store) cweSegments(ctx context.Context, companyID int64, scopes []Scope, f IssueFilter) ([]segment, error) {
	lists, err := s.scopesGroups(ctx, companyID, scopes, ByCWE)
	if err != nil {
		return nil, err
	}
	perScope := make([]map[string]int64, len(scopes))
	seen := map[string]bool{}
	var groups []string
	for n, gs := range lists {
		perScope[n] = map[string]int64{}
		for _, g := range gs {
			perScope[n][g.Group] = g.Cells.Total(f.Urgency, f.Status)
			if !seen[g.Group] {
				seen[g.Group] = true
				groups = append(groups, g.Group)
			}
		}
	}
	slices.SortFunc(groups, func(a, b string) int {
		return strings.Compare(groupSortKey(ByCWE, a), groupSortKey(ByCWE, b))
	})
	var segs []segment
	for _, g := range groups {
		for n, sc := range scopes {
			if c := perScope[n][g]; c > 0 {
				segs = append(segs, segment{index: tabledef.GSI1, pk: issueGroupPK(companyID, ByCWE, g), prefix: scopePrefix(sc), count: c})
			}
		}
	}
	return segs, nil
}

// listUncounted reads all of one file's matching issues in the scopes.
func (s *Store) listUncounted(ctx context.Context, companyID int64, scopes []Scope, path string, filter *expression.ConditionBuilder, offset, limit int) ([]Issue, int64, error) {
	var all []map[string]types.AttributeValue
	for _, sc := range scopes {
		sg := segment{index: tabledef.GSI2, pk: issueGroupPK(companyID, ByFile, path), prefix: scopePrefix(sc)}
		items, err := s.queryWindow(ctx, sg.index.Name, sg.keyCondition(), filter, true, 0, maxWindow)
		if err != nil {
			return nil, 0, err
		}
		all = append(all, items...)
	}
	out := []Issue{}
	if offset < len(all) {
		if err := attributevalue.UnmarshalListOfMaps(all[offset:min(offset+limit, len(all))], &out); err != nil {
			return nil, 0, err
		}
	}
	return out, int64(len(all)), nil
}

package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
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

// ListIssues reads one page of the issues of f (after q.Token, else from
// q.Offset) and how many match in all. The total comes from the group
// counters, so it always equals the sum of the matching groups' counts.
// The total order is: CWE ascending (NoCWE first) unless f names a CWE or
// a file; then the order of f.Scopes; then project, branch, newest first,
// issue id.
//
// Reads: one counter per scope (a scope's CWE counters when no group is
// named), then the page itself: from a token, the page's own issues (and,
// with urgency or status, the other issues of its ranges between them); by
// number also the issues before the page inside the first segment read. A
// filter naming both a CWE and a file has no counter: it reads the file's
// issues of the scopes to count them, whichever way it is paged.
func (s *Store) ListIssues(ctx context.Context, companyID int64, f IssueFilter, q PageQuery) ([]Issue, PageResult, int64, error) {
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
		return s.listUncounted(ctx, companyID, scopes, f, and(filter), q)
	case f.FilePath != "":
		segs, err = s.groupSegments(ctx, companyID, scopes, ByFile, f.FilePath, f)
	case f.CWE != nil:
		segs, err = s.groupSegments(ctx, companyID, scopes, ByCWE, strconv.Itoa(*f.CWE), f)
	default:
		segs, err = s.cweSegments(ctx, companyID, scopes, f)
	}
	if err != nil {
		return nil, PageResult{}, 0, err
	}
	var total int64
	for _, sg := range segs {
		total += sg.count
	}
	// The page starts in segment first, after start (a token's key) or
	// after skip of its matches.
	res := PageResult{Offset: q.Offset}
	first, pos, skip := 0, int64(0), int64(q.Offset)
	var start map[string]types.AttributeValue
	if q.Token != "" {
		c, n, ok := decodeSegmentToken(segs, f, q.Token)
		if !ok {
			return nil, PageResult{}, 0, ErrBadPageToken
		}
		first, start, res.Offset = n, attrKey(c.Key), c.Offset
		for _, sg := range segs[:n] {
			pos += sg.count
		}
		skip = int64(c.Offset) - pos // matches of segment first before the page
	} else {
		for first < len(segs) && segs[first].count <= skip {
			skip -= segs[first].count
			first++
		}
	}
	out := []Issue{}
	last := -1
	var lastItem map[string]types.AttributeValue
	for n := first; n < len(segs) && len(out) < q.Limit; n++ {
		sg := segs[n]
		if sg.count <= skip { // a token past its segment's count (issues moved since)
			start, skip = nil, 0
			continue
		}
		read := skip
		if start != nil {
			read = 0
		}
		items, err := s.queryWindowFrom(ctx, sg.index.Name, sg.keyCondition(), and(filter), true, start, int(read), int(min(int64(q.Limit-len(out)), sg.count-skip)))
		if err != nil {
			return nil, PageResult{}, 0, err
		}
		start, skip = nil, 0
		var page []Issue
		if err := attributevalue.UnmarshalListOfMaps(items, &page); err != nil {
			return nil, PageResult{}, 0, err
		}
		out = append(out, page...)
		if len(items) > 0 {
			last, lastItem = n, items[len(items)-1]
		}
	}
	if len(out) > 0 && len(out) == q.Limit && int64(res.Offset+len(out)) < total {
		if res.Next, err = segmentToken(segs[last], f, lastItem, res.Offset+len(out)); err != nil {
			return nil, PageResult{}, 0, err
		}
	}
	return out, res, total, nil
}

// list is the segment as a list, for its page tokens: bound to the filter
// (whose order and positions they carry) as well as to the range.
func (sg segment) list(f IssueFilter) List {
	return List{Index: sg.index, Partition: sg.pk, SKPrefix: sg.prefix, Forward: true,
		View: fmt.Sprintf("issues|%v|%v|%s|%s|%s", f.Scopes, cweOf(f), f.FilePath, f.Urgency, f.Status)}
}

func cweOf(f IssueFilter) string {
	if f.CWE == nil {
		return "-"
	}
	return strconv.Itoa(*f.CWE)
}

// segmentToken is the token of the page after item, the last one read,
// of segment sg, at position pos of the result.
func segmentToken(sg segment, f IssueFilter, item map[string]types.AttributeValue, pos int) (string, error) {
	l := sg.list(f)
	plain := map[string]string{}
	for _, a := range l.keyAttrs() {
		v, ok := item[a].(*types.AttributeValueMemberS)
		if !ok {
			return "", fmt.Errorf("issue without key attribute %s", a)
		}
		plain[a] = v.Value
	}
	return encodeToken(l, cursor{Key: plain, Offset: pos})
}

// decodeSegmentToken finds the segment a token was issued for.
func decodeSegmentToken(segs []segment, f IssueFilter, token string) (cursor, int, bool) {
	for n, sg := range segs {
		if c, err := decodeToken(sg.list(f), token); err == nil {
			return c, n, true
		}
	}
	return cursor{}, 0, false
}

func (sg segment) keyCondition() expression.KeyConditionBuilder {
	kc := expression.Key(sg.index.PK).Equal(expression.Value(sg.pk))
	if sg.prefix != "" {
		kc = kc.And(ddb.SKPrefix(sg.index.SK, sg.prefix))
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

// listUncounted reads all of one file's matching issues in the scopes and
// cuts the page from them; a token carries the page's position.
func (s *Store) listUncounted(ctx context.Context, companyID int64, scopes []Scope, f IssueFilter, filter *expression.ConditionBuilder, q PageQuery) ([]Issue, PageResult, int64, error) {
	sg := segment{index: tabledef.GSI2, pk: issueGroupPK(companyID, ByFile, f.FilePath)}
	res := PageResult{Offset: q.Offset}
	if q.Token != "" {
		c, _, ok := decodeSegmentToken([]segment{sg}, f, q.Token)
		if !ok {
			return nil, PageResult{}, 0, ErrBadPageToken
		}
		res.Offset = c.Offset
	}
	var all []map[string]types.AttributeValue
	for _, sc := range scopes {
		scoped := sg
		scoped.prefix = scopePrefix(sc)
		items, err := s.queryWindow(ctx, sg.index.Name, scoped.keyCondition(), filter, true, 0, maxWindow)
		if err != nil {
			return nil, PageResult{}, 0, err
		}
		all = append(all, items...)
	}
	out := []Issue{}
	if res.Offset < len(all) {
		page := all[res.Offset:min(res.Offset+q.Limit, len(all))]
		if err := attributevalue.UnmarshalListOfMaps(page, &out); err != nil {
			return nil, PageResult{}, 0, err
		}
		if end := res.Offset + len(page); len(page) > 0 && len(page) == q.Limit && end < len(all) {
			var err error
			if res.Next, err = segmentToken(sg, f, page[len(page)-1], end); err != nil {
				return nil, PageResult{}, 0, err
			}
		}
	}
	return out, res, int64(len(all)), nil
}

package issuelists

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// IssueFilter selects the issues of the drill-down (GET /issues).
type IssueFilter struct {
	// Scopes the issues come from, in the order they are listed (callers
	// give ascending project ids); none means the whole company.
	Scopes   []schema.Scope
	CWE      *int   // one CWE (NoCWE for issues without one)
	FilePath string // one exact file path
	Urgency  string // one urgency code
	Status   string // one status
	// AcceptedBefore keeps the accepted risks whose end is before it (the
	// zero time: no such filter); see listAccepted.
	AcceptedBefore time.Time
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
func (x *Lists) ListIssues(ctx context.Context, companyID int64, f IssueFilter, q page.Request) (page.Page[findings.Issue], error) {
	if !f.AcceptedBefore.IsZero() {
		return x.listAccepted(ctx, companyID, f, q)
	}
	scopes := f.Scopes
	if len(scopes) == 0 {
		scopes = []schema.Scope{{}}
	}
	filter := attributeFilter(f)
	if f.FilePath != "" && f.CWE != nil {
		filter = append(filter, expression.Name("cwe").Equal(expression.Value(*f.CWE)))
		return x.listUncounted(ctx, companyID, scopes, f, and(filter), q)
	}
	segs, err := x.segments(ctx, companyID, scopes, f)
	if err != nil {
		return page.Page[findings.Issue]{}, err
	}
	var total int64
	for _, sg := range segs {
		total += sg.count
	}
	at, ok := pageStart(segs, f, q)
	if !ok {
		return page.Page[findings.Issue]{}, page.ErrBadToken
	}
	p := page.Page[findings.Issue]{Offset: at.offset}.Counted(total)
	var lastSeg int
	var last page.Item
	p.Items, lastSeg, last, err = x.readSegments(ctx, segs, f, filter, q, at)
	if err != nil {
		return page.Page[findings.Issue]{}, err
	}
	if n := len(p.Items); n > 0 && n == q.Limit && int64(p.Offset+n) < total {
		if p.Next, err = segs[lastSeg].list(f, and(filter)).TokenAfter(last, p.Offset+n); err != nil {
			return page.Page[findings.Issue]{}, err
		}
	}
	return p, nil
}

// attributeFilter is the conditions f puts on an issue's own attributes
// (urgency, status), in that order.
func attributeFilter(f IssueFilter) []expression.ConditionBuilder {
	var filter []expression.ConditionBuilder
	if f.Urgency != "" {
		filter = append(filter, expression.Name("urgency").Equal(expression.Value(f.Urgency)))
	}
	if f.Status != "" {
		filter = append(filter, expression.Name("status").Equal(expression.Value(f.Status)))
	}
	return filter
}

// segments are the counted runs of f's issues in the scopes, in list
// order: one group's ranges when f names a file or a CWE (not both: that
// filter has no counter), else every CWE group's.
func (x *Lists) segments(ctx context.Context, companyID int64, scopes []schema.Scope, f IssueFilter) ([]segment, error) {
	switch {
	case f.FilePath != "":
		return x.groupSegments(ctx, companyID, scopes, schema.ByFile, f.FilePath, f)
	case f.CWE != nil:
		return x.groupSegments(ctx, companyID, scopes, schema.ByCWE, strconv.Itoa(*f.CWE), f)
	default:
		return x.cweSegments(ctx, companyID, scopes, f)
	}
}

// startPoint is where a page starts: in segment first, after the token's
// key (fromToken) or after skip of its matches; offset is the page's
// position in the whole list.
type startPoint struct {
	first     int
	skip      int64
	token     page.Cursor
	fromToken bool
	offset    int
}

// pageStart finds where the page q starts in segs: after a token's key,
// else by skipping q.Offset matches over the segments' counts. It is false
// for a token issued for none of the segments.
func pageStart(segs []segment, f IssueFilter, q page.Request) (startPoint, bool) {
	at := startPoint{skip: int64(q.Offset), offset: q.Offset}
	if q.Token == "" {
		for at.first < len(segs) && segs[at.first].count <= at.skip {
			at.skip -= segs[at.first].count
			at.first++
		}
		return at, true
	}
	c, n, ok := openSegmentToken(segs, f, q.Token)
	if !ok {
		return startPoint{}, false
	}
	at.first, at.token, at.offset, at.fromToken = n, c, c.Offset, true
	at.skip = int64(c.Offset) // less the matches of the segments before
	for _, sg := range segs[:n] {
		at.skip -= sg.count
	}
	return at, true
}

// readSegments reads up to q.Limit issues from the segments, from at on;
// it returns them, and the segment and item of the last one read (lastSeg
// -1 when none was).
func (x *Lists) readSegments(ctx context.Context, segs []segment, f IssueFilter, filter []expression.ConditionBuilder, q page.Request, at startPoint) ([]findings.Issue, int, page.Item, error) {
	out := []findings.Issue{}
	var last page.Item
	lastSeg := -1
	skip := at.skip
	for n := at.first; n < len(segs) && len(out) < q.Limit; n++ {
		sg := segs[n]
		if sg.count <= skip { // a token past its segment's count (issues moved since)
			skip = 0
			continue
		}
		l := sg.list(f, and(filter))
		var from page.Start
		switch {
		case n == at.first && at.fromToken:
			from = at.token.Start()
		case n == at.first && skip > 0:
			var ok bool
			var err error
			if from, ok, err = x.skipIssues(ctx, l, int(skip)); err != nil {
				return nil, 0, nil, err
			} else if !ok { // fewer than counted (issues moved since)
				skip = 0
				continue
			}
		}
		items, err := page.Collect(ctx, x.t, l, from, int(min(int64(q.Limit-len(out)), sg.count-skip)))
		if err != nil {
			return nil, 0, nil, err
		}
		skip = 0
		var got []findings.Issue
		if err := attributevalue.UnmarshalListOfMaps(items, &got); err != nil {
			return nil, 0, nil, err
		}
		out = append(out, got...)
		if len(items) > 0 {
			lastSeg, last = n, items[len(items)-1]
		}
	}
	return out, lastSeg, last, nil
}

// skipIssues is the start after the first n matches of a segment's list.
// The Offset index mirrors the CWE index (GSI1) of every issue (a table
// written before it got its keys from BackfillDueIndex, which must have
// run before this version serves reads: see duebackfill.go), so an
// unfiltered CWE segment skips keys only there (~100 bytes an issue);
// else the segment's issues before the page are read.
func (x *Lists) skipIssues(ctx context.Context, l page.List, n int) (page.Start, bool, error) {
	if l.Index == tabledef.GSI1 && l.Filter == nil {
		l.OffsetPartition = l.Partition
	}
	return page.Skip(ctx, x.t, l, n)
}

// list is the segment as a list; its tokens are bound to the filter (whose
// order and positions they carry) as well as to the range.
func (sg segment) list(f IssueFilter, filter *expression.ConditionBuilder) page.List {
	return page.List{Index: sg.index, Partition: sg.pk, Range: page.Prefix(sg.prefix), Filter: filter, Forward: true,
		View: fmt.Sprintf("issues|%v|%v|%s|%s|%s", f.Scopes, cweOf(f), f.FilePath, f.Urgency, f.Status)}
}

func cweOf(f IssueFilter) string {
	if f.CWE == nil {
		return "-"
	}
	return strconv.Itoa(*f.CWE)
}

// openSegmentToken finds the segment a token was issued for.
func openSegmentToken(segs []segment, f IssueFilter, token string) (page.Cursor, int, bool) {
	for n, sg := range segs {
		if c, err := sg.list(f, nil).Open(token); err == nil {
			return c, n, true
		}
	}
	return page.Cursor{}, 0, false
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
func indexOf(dim schema.Dimension) tabledef.Index {
	if dim == schema.ByFile {
		return tabledef.GSI2
	}
	return tabledef.GSI1
}

// groupSegments are one group's ranges in each scope.
func (x *Lists) groupSegments(ctx context.Context, companyID int64, scopes []schema.Scope, dim schema.Dimension, group string, f IssueFilter) ([]segment, error) {
	counts, err := x.GroupCounts(ctx, companyID, scopes, dim, group)
	if err != nil {
		return nil, err
	}
	segs := make([]segment, len(scopes))
	for n, sc := range scopes {
		segs[n] = segment{index: indexOf(dim), pk: schema.IssueGroupPK(companyID, dim, group),
			prefix: findings.ScopePrefix(sc), count: counts[n].Cells.Total(f.Urgency, f.Status)}
	}
	return segs, nil
}

// cweSegments are every CWE group's ranges in each scope, CWE by CWE.
func (x *Lists) cweSegments(ctx context.Context, companyID int64, scopes []schema.Scope, f IssueFilter) ([]segment, error) {
	lists, err := x.scopesGroups(ctx, companyID, scopes, schema.ByCWE)
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
		return strings.Compare(schema.GroupSortKey(schema.ByCWE, a), schema.GroupSortKey(schema.ByCWE, b))
	})
	var segs []segment
	for _, g := range groups {
		for n, sc := range scopes {
			if c := perScope[n][g]; c > 0 {
				segs = append(segs, segment{index: tabledef.GSI1, pk: schema.IssueGroupPK(companyID, schema.ByCWE, g), prefix: findings.ScopePrefix(sc), count: c})
			}
		}
	}
	return segs, nil
}

// listUncounted reads all of one file's matching issues in the scopes and
// cuts the page from them; a token carries the page's position.
func (x *Lists) listUncounted(ctx context.Context, companyID int64, scopes []schema.Scope, f IssueFilter, filter *expression.ConditionBuilder, q page.Request) (page.Page[findings.Issue], error) {
	sg := segment{index: tabledef.GSI2, pk: schema.IssueGroupPK(companyID, schema.ByFile, f.FilePath)}
	l := sg.list(f, filter)
	p := page.Page[findings.Issue]{Items: []findings.Issue{}, Offset: q.Offset}
	if q.Token != "" {
		c, err := l.Open(q.Token)
		if err != nil {
			return page.Page[findings.Issue]{}, err
		}
		p.Offset = c.Offset
	}
	var all []page.Item
	for _, sc := range scopes {
		scoped := l
		scoped.Range = page.Prefix(findings.ScopePrefix(sc))
		items, err := page.Collect(ctx, x.t, scoped, page.Start{}, math.MaxInt)
		if err != nil {
			return page.Page[findings.Issue]{}, err
		}
		all = append(all, items...)
	}
	if p.Offset < len(all) {
		items := all[p.Offset:min(p.Offset+q.Limit, len(all))]
		if err := attributevalue.UnmarshalListOfMaps(items, &p.Items); err != nil {
			return page.Page[findings.Issue]{}, err
		}
		if end := p.Offset + len(items); len(items) > 0 && len(items) == q.Limit && end < len(all) {
			var err error
			if p.Next, err = l.TokenAfter(items[len(items)-1], end); err != nil {
				return page.Page[findings.Issue]{}, err
			}
		}
	}
	return p.Counted(int64(len(all))), nil
}

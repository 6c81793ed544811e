package quality

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Class is one classification of a scan's quality findings and how
// many it has.
type Class struct {
	Name  string `dynamodbav:"label"`
	Count int    `dynamodbav:"n"`
}

// QualityClasses is the directory of a scan's classifications, by class key.
func (x *Quality) QualityClasses(ctx context.Context, companyID int64, scanID string) ([]Class, error) {
	var all []Class
	if err := x.t.QueryAll(ctx, "", ddb.PKBeginsWith(schema.QualityDirPK(companyID, scanID), ""), true, &all); err != nil {
		return nil, err
	}
	out := []Class{}
	for _, c := range all {
		if c.Count > 0 {
			out = append(out, c)
		}
	}
	return out, nil
}

// ListScanQualityIssues reads one page of a scan's quality findings whose
// classification name contains classification (case-insensitive; "" for
// all), newest first, ties by id ascending, and how many match. The
// scan's directory names the matching classifications and their counts;
// when some do not match, only the matching ones' findings are read (one
// range each, merged), so a page costs at most its size per matching
// classification, plus, by number, the matching findings before it.
func (x *Quality) ListScanQualityIssues(ctx context.Context, companyID int64, scanID, classification string, q page.Request) (page.Page[Issue], error) {
	view := strings.ToLower(classification)
	l := scanList(companyID, scanID, view)
	classes, err := x.QualityClasses(ctx, companyID, scanID)
	if err != nil {
		return page.Page[Issue]{}, err
	}
	var match []string
	total := 0
	for _, c := range classes {
		if strings.Contains(strings.ToLower(c.Name), view) {
			match = append(match, schema.QualityClassPK(companyID, scanID, c.Name))
			total += c.Count
		}
	}
	if len(match) == len(classes) {
		p, err := page.ReadPage[Issue](ctx, x.t, l, q)
		return p.Counted(int64(total)), err
	}
	res := page.Result{Offset: q.Offset}
	after := ""
	if q.Token != "" {
		c, err := l.Open(q.Token)
		if err != nil {
			return page.Page[Issue]{}, err
		}
		after, res.Offset = strings.TrimPrefix(c.Key[tabledef.SK], schema.QualityScanPrefix(scanID)), c.Offset
		q.Offset = 0
	}
	items, err := x.mergeClasses(ctx, companyID, scanID, match, after, q.Offset, q.Limit)
	if err != nil {
		return page.Page[Issue]{}, err
	}
	out := []Issue{}
	if err := attributevalue.UnmarshalListOfMaps(items, &out); err != nil {
		return page.Page[Issue]{}, err
	}
	if n := len(out); n == q.Limit && res.Offset+n < total {
		last := out[n-1].Key
		if res.Next, err = l.Seal(page.Cursor{Key: map[string]string{tabledef.PK: last.PK, tabledef.SK: last.SK}, Offset: res.Offset + n}); err != nil {
			return page.Page[Issue]{}, err
		}
	}
	return page.Of(out, res).Counted(int64(total)), nil
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
func (x *Quality) mergeClasses(ctx context.Context, companyID int64, scanID string, partitions []string, after string, skip, take int) ([]map[string]types.AttributeValue, error) {
	ranges := make([]classRange, len(partitions))
	if after != "" {
		for n, pk := range partitions {
			ranges[n].start = map[string]types.AttributeValue{
				tabledef.PK: &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)}, tabledef.SK: &types.AttributeValueMemberS{Value: schema.QualityScanPrefix(scanID) + after},
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
		err := x.t.Parallel(ctx, len(empty), func(i int) error {
			r := &ranges[empty[i]]
			kc := expression.Key(tabledef.GSI2.PK).Equal(expression.Value(partitions[empty[i]]))
			items, next, err := x.t.QueryRaw(ctx, tabledef.GSI2.Name, kc, nil, true, want, r.start)
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

// ListProjectQualityIssues reads one page of the quality findings of a
// project's scans, newest first (ties by id), and their number (a counter).
// A page by number reads the findings before it.
func (x *Quality) ListProjectQualityIssues(ctx context.Context, companyID, projectID int64, q page.Request) (page.Page[Issue], error) {
	l := page.List{Index: tabledef.GSI1, Partition: schema.QualityProjectPK(companyID, projectID), Forward: true}
	return counted.Page[Issue](ctx, x.t, x.l, companyID, l, q, schema.QualityProjectCount(projectID))
}

// EachQualityIssue calls fn with every quality finding of a company (as
// EachIssue, for checks).
func (x *Quality) EachQualityIssue(ctx context.Context, companyID int64, fn func(Issue) error) error {
	return ddb.Each(ctx, x.t, ddb.PKBeginsWith(schema.CompanyPK(companyID), schema.QualityIssueSKPrefix), fn)
}

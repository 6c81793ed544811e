package page_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// table is a fresh table of DynamoDB Local.
func table(t *testing.T) *ddb.Table {
	st := testenv.NewStore(t)
	return ddb.New(st.Client(), st.TableName())
}

type row struct {
	ddb.Key
	schema.OffsetKeys
	Odd bool `dynamodbav:"odd"`
}

func rowList(c int64) page.List {
	return page.List{Partition: schema.CompanyPK(c), Range: page.Prefix("ROW#"), Forward: true, OffsetPartition: schema.CompanyPK(c) + "#ROWS"}
}

// putRows gives companies 1 and 2 n rows each (ROW#0...), in their Offset
// partitions when offsets is set.
func putRows(t *testing.T, tb *ddb.Table, n int, offsets bool) {
	for c := int64(1); c <= 2; c++ {
		for i := range n {
			r := row{Key: ddb.Key{PK: schema.CompanyPK(c), SK: fmt.Sprintf("ROW#%d", i)}, Odd: i%2 == 1}
			if offsets {
				r.OffsetKeys = schema.OffsetKeys{OffsetPK: rowList(c).OffsetPartition, OffsetSK: r.SK}
			}
			if err := tb.PutItem(context.Background(), r, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// pageThrough reads l by token from its first page and returns the rows.
func pageThrough(t *testing.T, tb *ddb.Table, l page.List, size int) []string {
	t.Helper()
	var seen []string
	q := page.Request{Limit: size}
	for {
		res, err := page.ReadPage[row](context.Background(), tb, l, q)
		if err != nil {
			t.Fatal(err)
		}
		rows := res.Items
		if res.Offset != len(seen) {
			t.Fatalf("page at offset %d after %d rows", res.Offset, len(seen))
		}
		for _, r := range rows {
			seen = append(seen, r.SK)
		}
		if res.Next == "" {
			return seen
		}
		if len(rows) == 0 {
			t.Fatal("a token led to an empty page")
		}
		q.Token = res.Next
	}
}

// byNumber reads l page by page by number, past its end.
func byNumber(t *testing.T, tb *ddb.Table, l page.List, size, pages int) []string {
	t.Helper()
	var seen []string
	for n := range pages {
		res, err := page.ReadPage[row](context.Background(), tb, l, page.Request{Limit: size, Offset: n * size})
		if err != nil || res.Offset != n*size {
			t.Fatalf("page %d: %+v %v", n+1, res, err)
		}
		for _, r := range res.Items {
			seen = append(seen, r.SK)
		}
	}
	return seen
}

// Every way to reach a page answers the same rows: by token or by number,
// skipping through the Offset index or the list itself, with a filter, and
// a page that ends the list exactly gives no token.
func TestPagesByTokenAndByNumberAgree(t *testing.T) {
	tb := table(t)
	putRows(t, tb, 7, true)
	plain := rowList(1)
	plain.OffsetPartition = ""
	odd := expression.Name("odd").Equal(expression.Value(true))
	filtered := rowList(1)
	filtered.Filter, filtered.View = &odd, "odd"
	for name, c := range map[string]struct {
		l    page.List
		want string
	}{
		"offset index": {rowList(1), "[ROW#0 ROW#1 ROW#2 ROW#3 ROW#4 ROW#5 ROW#6]"},
		"list itself":  {plain, "[ROW#0 ROW#1 ROW#2 ROW#3 ROW#4 ROW#5 ROW#6]"},
		"filtered":     {filtered, "[ROW#1 ROW#3 ROW#5]"},
	} {
		for _, size := range []int{1, 3, 7} {
			got := pageThrough(t, tb, c.l, size)
			if fmt.Sprint(got) != c.want {
				t.Fatalf("%s by %d: paged rows %v", name, size, got)
			}
			if num := byNumber(t, tb, c.l, size, 12/size+1); fmt.Sprint(num) != c.want {
				t.Fatalf("%s by %d: by number %v, want %s", name, size, num, c.want)
			}
		}
	}
}

func TestPageTokensStayInTheirList(t *testing.T) {
	tb := table(t)
	ctx := context.Background()
	putRows(t, tb, 5, false)
	res, err := page.ReadPage[row](ctx, tb, rowList(1), page.Request{Limit: 2})
	if err != nil || res.Next == "" {
		t.Fatalf("first page: %+v %v", res, err)
	}
	token := res.Next
	data, sum, _ := strings.Cut(token, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(data)
	edited := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), "ROW#1", "ROW#3", 1))) + "." + sum
	other := rowList(1)
	other.Range = page.Prefix("ROW#1")
	view := rowList(1)
	view.View = "odd"
	for name, c := range map[string]struct {
		l     page.List
		token string
	}{
		"another company's list": {rowList(2), token},
		"another list":           {other, token},
		"another view":           {view, token},
		"edited":                 {rowList(1), edited},
		"truncated":              {rowList(1), token[:len(token)-2]},
		"no checksum":            {rowList(1), data},
		"garbage":                {rowList(1), "!!.!!"},
	} {
		if _, err := page.ReadPage[row](ctx, tb, c.l, page.Request{Limit: 2, Token: c.token}); !errors.Is(err, page.ErrBadToken) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Count counts a list's matches, its filter's only, in its partition and
// range only.
func TestCount(t *testing.T) {
	tb := table(t)
	putRows(t, tb, 25, false)
	odd := expression.Name("odd").Equal(expression.Value(true))
	filtered := rowList(1)
	filtered.Filter = &odd
	for _, c := range []struct {
		l    page.List
		want int64
	}{{rowList(1), 25}, {filtered, 12}, {page.List{Partition: schema.CompanyPK(3), Range: page.Prefix("ROW#")}, 0}} {
		if n, err := page.Count(context.Background(), tb, c.l); err != nil || n != c.want {
			t.Errorf("%+v: %d (%v), want %d", c.l, n, err, c.want)
		}
	}
}

package page_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/page"
)

// TestReadPage reads a list as Pages of a type: positions, next tokens by
// token and by number, no total (the list keeps none); Counted, Count and
// Map keep the page's place.
func TestReadPage(t *testing.T) {
	tb := table(t)
	putRows(t, tb, 5, true)
	ctx := context.Background()
	rows := testenv.Pages(t, 2, nil, func(q page.Request) (page.Page[row], error) { return page.ReadPage[row](ctx, tb, rowList(1), q) })
	if len(rows) != 5 || rows[4].SK != "ROW#4" {
		t.Fatalf("rows %+v", rows)
	}
	p, err := page.ReadPage[row](ctx, tb, rowList(1), page.Request{Limit: 2, Offset: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p.Count() != 0 || p.Total != nil {
		t.Fatalf("an uncounted page: %+v", p)
	}
	sks := page.Map(p.Counted(5), func(r row) string { return r.SK })
	if fmt.Sprint(sks.Items) != "[ROW#2 ROW#3]" || sks.Offset != 2 || sks.Next != p.Next || sks.Count() != 5 {
		t.Fatalf("mapped %+v from %+v", sks, p)
	}
	past, err := page.ReadPage[row](ctx, tb, rowList(1), page.Request{Limit: 2, Offset: 9})
	if err != nil || past.Items == nil || len(past.Items) != 0 || past.Next != "" || past.Offset != 9 {
		t.Fatalf("past the end: %+v %v", past, err)
	}
}

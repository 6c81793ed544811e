package testenv

import (
	"reflect"
	"testing"

	"github.com/acme/codescan-api/shared/store/page"
)

// Pages reads a whole list in pages of size, by token from the first page
// and then page by page by number, and checks the contract of page.Page
// on every page: Offset is the position of the page's first item, Next is
// set exactly when an item follows (and opens the page that follows), the
// total is want on every page (nil: the list is uncounted), and the pages
// by number hold what the pages by token held. It answers the items in
// order.
func Pages[T any](t testing.TB, size int, want *int64, read func(page.Request) (page.Page[T], error)) []T {
	t.Helper()
	var byToken [][]T
	var all []T
	for q := (page.Request{Limit: size}); ; {
		p := readPage(t, read, q, want)
		if p.Offset != len(all) {
			t.Fatalf("page %d by token: offset %d, want %d", len(byToken)+1, p.Offset, len(all))
		}
		byToken, all = append(byToken, p.Items), append(all, p.Items...)
		if p.Next == "" {
			break
		}
		if len(p.Items) != size {
			t.Fatalf("page %d by token: %d items and a next token", len(byToken), len(p.Items))
		}
		if len(byToken) > 1000 {
			t.Fatal("the list does not end")
		}
		q.Token = p.Next
	}
	if want != nil && int64(len(all)) != *want {
		t.Fatalf("the pages hold %d items, the total says %d", len(all), *want)
	}
	for n, items := range byToken {
		p := readPage(t, read, page.Request{Limit: size, Offset: n * size}, want)
		if p.Offset != n*size || !reflect.DeepEqual(p.Items, items) || (p.Next == "") != (n == len(byToken)-1) {
			t.Fatalf("page %d by number: offset %d, %d items, next %q; by token %d items", n+1, p.Offset, len(p.Items), p.Next, len(items))
		}
	}
	return all
}

func readPage[T any](t testing.TB, read func(page.Request) (page.Page[T], error), q page.Request, want *int64) page.Page[T] {
	t.Helper()
	p, err := read(q)
	if err != nil {
		t.Fatalf("page %+v: %v", q, err)
	}
	if p.Items == nil {
		t.Fatalf("page %+v: nil items", q)
	}
	if (p.Total == nil) != (want == nil) || (want != nil && *p.Total != *want) {
		t.Fatalf("page %+v: total %v, want %v", q, p.Total, want)
	}
	return p
}

// Total is n as the total of a counted list (see Pages).
func Total(n int64) *int64 { return &n }

// PagesByNumber reads a whole list that pages by number only (no token,
// its total always counted) in pages of size, and checks the contract of
// page.Page on every page: Offset is the page's position, Next is always
// empty, every page but the last is full, the total is want on every page
// (a page past the end included, which is empty). It answers the items in
// order.
func PagesByNumber[T any](t testing.TB, size int, want int64, read func(page.Request) (page.Page[T], error)) []T {
	t.Helper()
	var all []T
	for n := 0; ; n++ {
		q := page.Request{Limit: size, Offset: n * size}
		p := readPage(t, read, q, &want)
		if p.Offset != q.Offset || p.Next != "" || len(p.Items) > size {
			t.Fatalf("page %d by number: offset %d, %d items, next %q", n+1, p.Offset, len(p.Items), p.Next)
		}
		all = append(all, p.Items...)
		if int64(len(all)) >= want {
			if int64(len(all)) != want {
				t.Fatalf("the pages hold %d items, the total says %d", len(all), want)
			}
			break
		}
		if len(p.Items) != size {
			t.Fatalf("page %d by number: %d items before the end", n+1, len(p.Items))
		}
	}
	past := readPage(t, read, page.Request{Limit: size, Offset: len(all) + size}, &want)
	if len(past.Items) != 0 || past.Next != "" {
		t.Fatalf("past the end: %d items, next %q", len(past.Items), past.Next)
	}
	return all
}

package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"

	storepage "github.com/acme/codescan-api/shared/store/page"
)

func TestWriteList(t *testing.T) {
	pg := Paging{Page: 2, PageSize: 2}
	five := func(p storepage.Page[int]) storepage.Page[int] { return p.Counted(5) }
	for _, c := range []struct {
		name string
		l    List
		p    storepage.Page[int]
		more []Member
		want string
	}{
		{"counted, a page follows", Numbered("rows", "total_rows"), five(storepage.Page[int]{Items: []int{3, 4}, Offset: 2, Next: "t"}), nil,
			`{"status":"ok","rows":[3,4],"page":2,"page_size":2,"total_pages":3,"total_rows":5,"next_page_token":"t"}`},
		{"counted, the total reached", Numbered("rows", "total_rows"), five(storepage.Page[int]{Items: []int{5}, Offset: 4, Next: "t"}), nil,
			`{"status":"ok","rows":[5],"page":3,"page_size":2,"total_pages":3,"total_rows":5}`},
		{"uncounted", Numbered("rows", "total_rows"), storepage.Page[int]{Items: []int{3, 4}, Offset: 2, Next: "t"}, nil,
			`{"status":"ok","rows":[3,4],"page":2,"page_size":2,"total_pages":3,"next_page_token":"t"}`},
		{"uncounted, last", Numbered("rows", "total_rows"), storepage.Page[int]{Offset: 2}, nil,
			`{"status":"ok","rows":[],"page":2,"page_size":2,"total_pages":2}`},
		{"null next and more", List{Rows: "rows", PageSize: true, NullNext: true}, storepage.Page[int]{Items: []int{1}}, []Member{{"extra", map[string]int{"a": 1}}},
			`{"status":"ok","rows":[1],"page_size":2,"next_page_token":null,"extra":{"a":1}}`},
		{"by number", List{Rows: "rows", Total: "total_rows", Page: true, TotalPages: true, ByNumber: true}, five(storepage.Page[int]{Items: []int{3, 4}, Offset: 2, Next: "t"}), nil,
			`{"status":"ok","rows":[3,4],"page":2,"total_pages":3,"total_rows":5}`},
	} {
		w := httptest.NewRecorder()
		if err := WriteList(w, pg, c.l, c.p, c.more...); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(w.Body.String()); got != c.want || w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s\nwant %s", c.name, w.Code, got, c.want)
		}
	}
}

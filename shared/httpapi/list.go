package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	storepage "github.com/acme/codescan-api/shared/store/page"
)

// List is how a route answers one page of a list (see WriteList): the
// member its rows go under, the member of the list's total, and which of
// the paging members it answers.
type List struct {
	Rows  string // the rows' member: "projects"
	Total string // the total's member ("total_projects"); "" when the route answers none
	// Page, PageSize and TotalPages say whether the route answers page
	// (the page's number), page_size and total_pages.
	Page, PageSize, TotalPages bool
	// NullNext answers next_page_token as null on the last page, where
	// the member is otherwise left out.
	NullNext bool
	// ByNumber is a list paged by number only: it answers no
	// next_page_token.
	ByNumber bool
}

// Numbered is the list answer of most routes: the rows under rows, page,
// page_size, total_pages and the total under total.
func Numbered(rows, total string) List {
	return List{Rows: rows, Total: total, Page: true, PageSize: true, TotalPages: true}
}

// Member is one more member of a list answer, after the list's own.
type Member struct {
	Name  string
	Value any
}

// WriteList answers one page of a list, the one writer of every list
// answer: an object of "status": "ok", the page's rows under l.Rows, then,
// as l names them, page (the number of the page read, from its position,
// so a page reached by token answers its number), page_size, total_pages,
// the total, next_page_token, and the extra members in order.
//
// For a counted list (p.Total set), total_pages counts the total's pages
// and the page that reaches the total has no next token. For an uncounted
// one, the total is not answered and total_pages is the page's number,
// one more while a page follows.
func WriteList[T any](w http.ResponseWriter, pg Paging, l List, p storepage.Page[T], extra ...Member) error {
	rows := p.Items
	if rows == nil {
		rows = []T{}
	}
	number := p.Offset/pg.PageSize + 1
	next := p.Next
	totalPages := number
	if p.Total != nil {
		totalPages = pg.TotalPages(int(*p.Total))
		if int64(p.Offset+pg.PageSize) >= *p.Total {
			next = ""
		}
	} else if next != "" {
		totalPages++
	}
	obj := object{{"status", "ok"}, {l.Rows, rows}}
	if l.Page {
		obj = append(obj, Member{"page", number})
	}
	if l.PageSize {
		obj = append(obj, Member{"page_size", pg.PageSize})
	}
	if l.TotalPages {
		obj = append(obj, Member{"total_pages", totalPages})
	}
	if l.Total != "" && p.Total != nil {
		obj = append(obj, Member{l.Total, *p.Total})
	}
	switch {
	case l.ByNumber:
	case next != "":
		obj = append(obj, Member{TokenParam, next})
	case l.NullNext:
		obj = append(obj, Member{TokenParam, nil})
	}
	return WriteJSON(w, http.StatusOK, append(obj, extra...))
}

// object is a JSON object whose members keep their order.
type object []Member

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for n, m := range o {
		if n > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(m.Name)
		if err != nil {
			return nil, err
		}
		value, err := json.Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

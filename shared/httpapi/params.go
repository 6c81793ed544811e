package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	storepage "github.com/acme/codescan-api/shared/store/page"
)

// Paging is a validated page/page_size pair (1-based page) and, when the
// client follows a cursor, the next_page_token it got with the previous
// page. A token wins over page: the page number answered is then the
// token's.
type Paging struct {
	Page     int
	PageSize int
	Token    string
}

// TokenParam is the query parameter (and response field) of page tokens.
// The lists that took theirs as page_token (projects, scans, policies,
// blocking rules) still do: ParsePaging accepts either name.
const (
	TokenParam    = "next_page_token"
	OldTokenParam = "page_token"
)

// ErrBadPageToken answers a page token the list did not issue (garbage,
// edited, another list's or another company's): one message for every
// list, as the error model gives store.ErrBadPageToken.
var ErrBadPageToken = OfKind(KindInvalid, "Invalid page token")

// Query is the store's page query for p: after the token, else after the
// pages before p.Page.
func (p Paging) Query() storepage.Request {
	if p.Token != "" {
		return storepage.Request{Limit: p.PageSize, Token: p.Token}
	}
	return storepage.Request{Limit: p.PageSize, Offset: p.Offset()}
}

// Offset is the index of the page's first row.
func (p Paging) Offset() int { return (p.Page - 1) * p.PageSize }

// TotalPages is the number of pages for total rows (0 when there are none).
func (p Paging) TotalPages(total int) int { return (total + p.PageSize - 1) / p.PageSize }

// Slice is the page p asks of all, a whole ordered list computed in
// memory, counted, without a next token (such a list pages by number).
// It is only for answers computed over every issue of a scan, whose other
// figures need all of them (a comparison with a baseline branch, the CI
// gate's blocking issues: docs/lists.md); every list is paged by the store
// (page.Page).
func Slice[T any](p Paging, all []T) storepage.Page[T] {
	from := min(p.Offset(), len(all))
	return storepage.Page[T]{Items: all[from:min(from+p.PageSize, len(all))], Offset: p.Offset()}.Counted(int64(len(all)))
}

// maxTokenLength bounds the token read (the store checks it in full).
const maxTokenLength = 8192

// maxPage bounds page numbers so offsets never overflow.
const maxPage = 1_000_000

// ParsePaging reads `page`, `page_size` and `next_page_token` (or
// `page_token`; both with different values is 400). Non-numeric, zero,
// negative or too large numbers are 400; the token is checked by the store
// when the page is read.
func ParsePaging(r *http.Request, defaultSize, maxSize int) (Paging, error) {
	page, err := intParam(r, "page", 1, 1, maxPage)
	if err != nil {
		return Paging{}, err
	}
	size, err := intParam(r, "page_size", defaultSize, 1, maxSize)
	if err != nil {
		return Paging{}, err
	}
	token, old := r.URL.Query().Get(TokenParam), r.URL.Query().Get(OldTokenParam)
	switch {
	case token != "" && old != "" && token != old:
		return Paging{}, Errorf(http.StatusBadRequest, "%s and %s differ", TokenParam, OldTokenParam)
	case token == "":
		token = old
	}
	if len(token) > maxTokenLength {
		return Paging{}, ErrBadPageToken
	}
	return Paging{Page: page, PageSize: size, Token: token}, nil
}

func intParam(r *http.Request, name string, def, lo, hi int) (int, error) {
	raw := r.URL.Query().Get(name)
	if strings.TrimSpace(raw) == "" {
		return def, nil
	}
	n, err := parseInt(name, raw, int64(lo), int64(hi))
	return int(n), err
}

// BoolParam reads a boolean query parameter (true/false/1/0, any case).
func BoolParam(r *http.Request, name string) (bool, error) {
	raw := r.URL.Query().Get(name)
	if strings.TrimSpace(raw) == "" {
		return false, nil
	}
	return parseBool(name, raw)
}

// parseBool reads true/false/1/0 (and strconv.ParseBool's t and f), any
// case, surrounding spaces allowed.
func parseBool(name, raw string) (bool, error) {
	b, err := strconv.ParseBool(strings.ToLower(strings.TrimSpace(raw)))
	if err != nil {
		return false, OfKind(KindInvalid, "%s must be true or false", name)
	}
	return b, nil
}

package httpapi

import (
	"net/http"
	"strconv"
	"strings"
)

// Paging is a validated page/page_size pair (1-based page).
type Paging struct {
	Page     int
	PageSize int
}

// Offset is the index of the page's first row.
func (p Paging) Offset() int { return (p.Page - 1) * p.PageSize }

// TotalPages is the number of pages for total rows (0 when there are none).
func (p Paging) TotalPages(total int) int { return (total + p.PageSize - 1) / p.PageSize }

// Slice returns the page's rows of all, the whole ordered list.
func Slice[T any](p Paging, all []T) []T {
	from := min(p.Offset(), len(all))
	return all[from:min(from+p.PageSize, len(all))]
}

// maxPage bounds page numbers so offsets never overflow.
const maxPage = 1_000_000

// ParsePaging reads `page` and `page_size`. Non-numeric, zero, negative or
// too large values are 400.
func ParsePaging(r *http.Request, defaultSize, maxSize int) (Paging, error) {
	page, err := intParam(r, "page", 1, 1, maxPage)
	if err != nil {
		return Paging{}, err
	}
	size, err := intParam(r, "page_size", defaultSize, 1, maxSize)
	if err != nil {
		return Paging{}, err
	}
	return Paging{Page: page, PageSize: size}, nil
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
	raw := strings.TrimSpace(r.URL.Query().Get(name))
	if raw == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(strings.ToLower(raw))
	if err != nil {
		return false, Errorf(http.StatusBadRequest, "%s must be true or false", name)
	}
	return b, nil
}

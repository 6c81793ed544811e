package routes

// Kind is what a declared parameter holds; the edge (httpapi) checks it
// before the handler runs.
type Kind int

const (
	// Text is bounded text: at most MaxBytes bytes (DefaultMaxBytes when 0).
	Text Kind = iota
	// ID is a numeric id: [1-9][0-9]* within int64, nothing else.
	ID
	// UUID is a uuid: 8-4-4-4-12 hex digits in any case, canonicalized to
	// lower case before the handler reads it.
	UUID
	// Enum is one of Values, matched exactly.
	Enum
	// Int is a decimal integer from Min to Max (surrounding spaces allowed,
	// as the paging parameters always accepted them).
	Int
)

// Limits that apply where a route declares nothing more precise.
const (
	// DefaultMaxBytes bounds a declared text parameter and every path
	// parameter a route does not declare.
	DefaultMaxBytes = 256
	// MaxQueryValueBytes bounds every query value, declared or not (unknown
	// parameters are ignored, never unbounded).
	MaxQueryValueBytes = 2048
)

// Param declares a path or query parameter of a route. A name that is a
// wildcard of the route's path is a path parameter; any other is a query
// parameter. Query parameters are optional at the edge: a handler answers
// for a required one that is missing.
type Param struct {
	Name     string
	Kind     Kind
	MaxBytes int      // Text: the bound in bytes (DefaultMaxBytes when 0)
	Values   []string // Enum
	Min, Max int64    // Int
}

// Declared parameter builders, so the table reads as a list of rules.
func TextParam(name string, maxBytes int) Param {
	return Param{Name: name, Kind: Text, MaxBytes: maxBytes}
}
func IDParam(name string) Param   { return Param{Name: name, Kind: ID} }
func UUIDParam(name string) Param { return Param{Name: name, Kind: UUID} }
func EnumParam(name string, values ...string) Param {
	return Param{Name: name, Kind: Enum, Values: values}
}
func IntParam(name string, min, max int64) Param {
	return Param{Name: name, Kind: Int, Min: min, Max: max}
}

// Paging is the `page`/`page_size` pair of the offset-paged lists; each
// handler applies its own smaller page_size maximum.
func Paging(maxPageSize int64) []Param {
	return []Param{IntParam("page", 1, 1_000_000), IntParam("page_size", 1, maxPageSize)}
}

// CursorPaging is Paging plus the page token of the lists read by key:
// `next_page_token`, or `page_token` as some lists first named it.
func CursorPaging(maxPageSize int64) []Param {
	return append(Paging(maxPageSize), TextParam("next_page_token", MaxQueryValueBytes), TextParam("page_token", MaxQueryValueBytes))
}

// Limit is the bound in bytes of a text parameter.
func (p Param) Limit() int {
	if p.MaxBytes > 0 {
		return p.MaxBytes
	}
	return DefaultMaxBytes
}

// Declared returns the route's declaration of a parameter; a path
// parameter the route does not declare is bounded text.
func (r Route) Declared(name string) (Param, bool) {
	for _, p := range r.Params {
		if p.Name == name {
			return p, true
		}
	}
	for _, n := range r.PathParams() {
		if n == name {
			return Param{Name: name, Kind: Text}, true
		}
	}
	return Param{}, false
}

// BodyLimit is the most a request body of the route may hold, after
// decoding a Content-Encoding.
func (r Route) BodyLimit() int64 {
	if r.MaxBodyBytes > 0 {
		return r.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

// DecodedLimit is the bound of a gzip-encoded body once decoded.
func (r Route) DecodedLimit() int64 {
	if r.MaxDecodedBytes > 0 {
		return r.MaxDecodedBytes
	}
	return r.BodyLimit()
}

// DefaultMaxBodyBytes: a body may use most of Lambda's 6 MB synchronous
// payload.
const DefaultMaxBodyBytes = 5 << 20

// ErrorForm is the shape of a route's error bodies.
type ErrorForm int

const (
	// ErrorField: {"error": message}.
	ErrorField ErrorForm = iota
	// StatusMessage: {"status": "error", "message": message} (the upload
	// routes, as their clients read it).
	StatusMessage
)

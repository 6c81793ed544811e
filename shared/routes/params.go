package routes

// Kind is what a declared parameter holds; the edge (httpapi) checks it
// before the handler runs. Every kind refuses invalid UTF-8.
type Kind int

const (
	// Text is bounded single-line text: at most MaxBytes bytes
	// (DefaultMaxBytes when 0), no control or bidi characters (the rules of
	// shared/cleantext), NFC-normalized before the handler reads it.
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
	// Bool is true, false, 1 or 0 (or t, f), in any case.
	Bool
	// FilePath is a repository-relative file path (a source file's name):
	// at most MaxBytes bytes as sent and, once percent-decoded as report
	// paths are (reports/norm.Unscheme), no control or bidi characters and
	// no segment over MaxSegmentBytes. It is not rewritten: paths are
	// NFC-normalized where report paths are, so both sides name one file
	// alike.
	FilePath
)

// Limits that apply where a route declares nothing more precise.
const (
	// DefaultMaxBytes bounds a declared text parameter and every path
	// parameter a route does not declare.
	DefaultMaxBytes = 256
	// MaxQueryValueBytes bounds every query value, declared or not (unknown
	// parameters are ignored, never unbounded).
	MaxQueryValueBytes = 2048
	// MaxNameBytes bounds a project or branch name, wherever one is sent:
	// 255 characters of up to 4 bytes.
	MaxNameBytes = 1020
	// MaxURLBytes bounds a repository URL or a pattern of one.
	MaxURLBytes = 2048
	// MaxFilePathBytes bounds a file path as sent (a stored path is at most
	// 768 bytes once normalized: reports/norm.MaxPath).
	MaxFilePathBytes = 1024
	// MaxSegmentBytes bounds one segment of a file path: a file name on
	// every common file system.
	MaxSegmentBytes = 255
)

// Param declares a path or query parameter of a route. A name that is a
// wildcard of the route's path is a path parameter; any other is a query
// parameter. Query parameters are optional at the edge: a handler answers
// for a required one that is missing.
type Param struct {
	Name     string
	Kind     Kind
	MaxBytes int // Text: the bound in bytes (DefaultMaxBytes when 0)
	// Multiline: Text that may hold newlines and tabs (a body member of
	// an object that people write several lines in, as a reason).
	Multiline bool
	Values    []string // Enum
	Min, Max  int64    // Int
}

// Declared parameter builders, so the table reads as a list of rules.
func TextParam(name string, maxBytes int) Param {
	return Param{Name: name, Kind: Text, MaxBytes: maxBytes}
}

// LinesParam is a text member of a body object that may span lines.
func LinesParam(name string, maxBytes int) Param {
	return Param{Name: name, Kind: Text, MaxBytes: maxBytes, Multiline: true}
}
func IDParam(name string) Param   { return Param{Name: name, Kind: ID} }
func UUIDParam(name string) Param { return Param{Name: name, Kind: UUID} }
func EnumParam(name string, values ...string) Param {
	return Param{Name: name, Kind: Enum, Values: values}
}
func IntParam(name string, min, max int64) Param {
	return Param{Name: name, Kind: Int, Min: min, Max: max}
}
func BoolParam(name string) Param { return Param{Name: name, Kind: Bool} }
func FilePathParam(name string) Param {
	return Param{Name: name, Kind: FilePath, MaxBytes: MaxFilePathBytes}
}

// Object declares a member of the JSON body that is an object of
// parameters (the bulk triage's filters): each declared member, a string
// or an array of strings, is checked as a query parameter of its Param
// would be. Undeclared members are the handler's to refuse.
type Object struct {
	Member string
	Params []Param
}

// Paging is the `page`/`page_size` pair of the offset-paged lists; each
// handler applies its own smaller page_size maximum.
func Paging(maxPageSize int64) []Param {
	return []Param{IntParam("page", 1, 1_000_000), IntParam("page_size", 1, maxPageSize)}
}

// CursorPaging is Paging plus the page token of the lists read by key:
// `next_page_token`, or `page_token` as some lists first named it.
func CursorPaging(maxPageSize int64) []Param {
	return append(Paging(maxPageSize), PageTokens()...)
}

// PageTokens are the two names of a page token.
func PageTokens() []Param {
	return []Param{TextParam("next_page_token", MaxQueryValueBytes), TextParam("page_token", MaxQueryValueBytes)}
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
	// BlockOnMessage: the CI gate's BlockOnError, {"message": message} with
	// its three slug lists (empty unless the handler fills them).
	BlockOnMessage
)

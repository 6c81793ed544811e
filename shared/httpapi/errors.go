// Package httpapi is what every endpoint group shares on the HTTP side:
// JSON writing, the one error model, the edge checks every route goes
// through (credentials, encodings, declared parameters), request parsing
// helpers, and mounting routes of the route table behind authentication.
package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/page"
)

// Error is a client-facing error: a status and either a message (written in
// the route's error form, see routes.ErrorForm) or an exact body.
type Error struct {
	Status  int
	Message string
	// Body, when set, is written as is: the few answers whose shape the
	// spec fixes beyond a message (a conflict carrying the existing team).
	Body any
	// upload forces the {"status":"error","message":…} form.
	upload bool
}

func (e *Error) Error() string {
	if e.Body != nil {
		return fmt.Sprintf("%d %v", e.Status, e.Body)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Message)
}

// Errorf is an error with a message, in the route's form.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// UploadError is an error of kind k always in the upload routes' form,
// `{"status":"error","message":…}`, whatever route returns it.
func UploadError(k Kind, format string, args ...any) *Error {
	return &Error{Status: kinds[k].status, Message: fmt.Sprintf(format, args...), upload: true}
}

// Kind is a class of error; kinds maps each to its status and the message
// a client sees when nothing more precise is said.
type Kind int

const (
	KindInternal Kind = iota
	KindInvalid
	KindUnauthenticated
	KindPermission
	KindNotFound
	KindConflict
	KindTooLarge
	KindUnsupportedMedia
	KindRateLimited
	KindUnavailable
	KindUnprocessable
)

// kinds is the one table from error kind to answer.
var kinds = map[Kind]struct {
	status  int
	message string
}{
	KindInternal:         {http.StatusInternalServerError, "Internal server error"},
	KindInvalid:          {http.StatusBadRequest, "Invalid request"},
	KindUnauthenticated:  {http.StatusUnauthorized, "Missing or invalid authorization header"},
	KindPermission:       {http.StatusForbidden, "Permission denied"},
	KindNotFound:         {http.StatusNotFound, "Not found"},
	KindConflict:         {http.StatusConflict, "The resource was changed by another request; retry"},
	KindTooLarge:         {http.StatusRequestEntityTooLarge, "Request body too large"},
	KindUnsupportedMedia: {http.StatusUnsupportedMediaType, "Unsupported Content-Encoding (use gzip or identity)"},
	KindRateLimited:      {http.StatusTooManyRequests, "Rate limit exceeded"},
	KindUnavailable:      {http.StatusServiceUnavailable, "Service temporarily unavailable; retry later"},
	KindUnprocessable:    {http.StatusUnprocessableEntity, "The request is well-formed but cannot be carried out"},
}

// Of is the error of a kind with its table message.
func Of(k Kind) *Error { return &Error{Status: kinds[k].status, Message: kinds[k].message} }

// OfKind is the error of a kind with a message of its own.
func OfKind(k Kind, format string, args ...any) *Error {
	return Errorf(kinds[k].status, format, args...)
}

// Constructors per kind, with a message of the handler's: handlers say
// what went wrong, the table says with which status.

// Invalid is a request the API refuses as it is (400).
func Invalid(format string, args ...any) *Error { return OfKind(KindInvalid, format, args...) }

// NotFound is a resource the caller's company does not have (404).
func NotFound(format string, args ...any) *Error { return OfKind(KindNotFound, format, args...) }

// Conflict is a request at odds with the stored state (409).
func Conflict(format string, args ...any) *Error { return OfKind(KindConflict, format, args...) }

// Denied is a request the caller may not make (403).
func Denied(format string, args ...any) *Error { return OfKind(KindPermission, format, args...) }

// TooLarge is a request past a size or count limit (413).
func TooLarge(format string, args ...any) *Error { return OfKind(KindTooLarge, format, args...) }

// Unprocessable is a well-formed request that cannot be carried out, such
// as credentials a third party refuses (422).
func Unprocessable(format string, args ...any) *Error {
	return OfKind(KindUnprocessable, format, args...)
}

// Unavailable is a dependency that cannot answer now (503).
func Unavailable(format string, args ...any) *Error { return OfKind(KindUnavailable, format, args...) }

// RetryAfterSeconds is what a 503 tells the client to wait.
const RetryAfterSeconds = "1"

var (
	ErrUnauthenticated = Of(KindUnauthenticated)
	ErrPermission      = Of(KindPermission)
	ErrAdmin           = OfKind(KindPermission, "Admin permission required")
	ErrInvalidJSON     = OfKind(KindInvalid, "Invalid JSON body")
	ErrRateLimited     = Of(KindRateLimited)
	// ErrAmbiguousCredentials: more than one credential header.
	ErrAmbiguousCredentials = OfKind(KindInvalid, "ambiguous credentials")
	errInternal             = Of(KindInternal)
	errUnavailable          = Of(KindUnavailable)
)

// classify is the one place where errors become answers: the client errors
// handlers return, the store's sentinels, text and key limits, and the
// transient failures of DynamoDB. internal is true when the answer is the
// generic 500 (the cause is for the log only).
func classify(err error) (e *Error, internal bool) {
	var apiErr *Error
	var textErr *cleantext.Error
	var keyErr *ddb.KeyTooLongError
	switch {
	case errors.As(err, &apiErr):
		return apiErr, false
	case errors.As(err, &textErr):
		return OfKind(KindInvalid, "%s", textErr.Error()), false
	case errors.As(err, &keyErr):
		return OfKind(KindInvalid, "%s", keyErr.Error()), false
	case errors.Is(err, page.ErrBadToken):
		return ErrBadPageToken, false
	case errors.Is(err, ddb.ErrInvalid):
		return Of(KindInvalid), false
	case errors.Is(err, ddb.ErrNotFound):
		return Of(KindNotFound), false
	case errors.Is(err, ddb.ErrConflict):
		return Of(KindConflict), false
	case errors.Is(err, auth.ErrKeysUnavailable):
		return OfKind(KindUnavailable, "Token verification unavailable"), false
	case errors.Is(err, ddb.ErrUnavailable), ddb.Transient(err):
		return errUnavailable, false
	}
	return errInternal, true
}

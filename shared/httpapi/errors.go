// Package httpapi is what every endpoint group shares on the HTTP side:
// JSON writing, the error type and its status mapping, request parsing
// helpers, and mounting routes of the route table behind authentication.
package httpapi

import (
	"fmt"
	"net/http"
)

// Error is a client-facing error: a status and the exact body to send.
type Error struct {
	Status int
	Body   any
}

func (e *Error) Error() string { return fmt.Sprintf("%d %v", e.Status, e.Body) }

// Errorf is the common `{"error": "<message>"}` form.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Body: map[string]string{"error": fmt.Sprintf(format, args...)}}
}

// UploadError is the `{"status": "error", "message": ...}` form upload
// operations use.
func UploadError(status int, format string, args ...any) *Error {
	return &Error{Status: status, Body: map[string]string{"status": "error", "message": fmt.Sprintf(format, args...)}}
}

// Bodies the spec fixes.
var (
	ErrUnauthenticated = Errorf(http.StatusUnauthorized, "Missing or invalid authorization header")
	ErrPermission      = Errorf(http.StatusForbidden, "Permission denied")
	ErrAdmin           = Errorf(http.StatusForbidden, "Admin permission required")
	ErrInvalidJSON     = Errorf(http.StatusBadRequest, "Invalid JSON body")
	ErrUnavailable     = Errorf(http.StatusServiceUnavailable, "Service temporarily unavailable, retry later")
	errInternal        = Errorf(http.StatusInternalServerError, "Internal server error")
)

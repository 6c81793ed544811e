// Package jsonerr names the member of a JSON document that encoding/json
// could not decode, the same way whichever Go toolchain built the binary.
package jsonerr

import "strings"

// MemberPath is a member's path without array indices ("runs.results"):
// Go 1.27's encoding/json puts them in (runs.0.results) and earlier ones do
// not, and an error message must not depend on the toolchain.
func MemberPath(field string) string {
	parts := strings.Split(field, ".")
	out := parts[:0]
	for _, p := range parts {
		if strings.Trim(p, "0123456789") != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

package schema

import "github.com/google/uuid"

// CanonicalUUID returns the lower-case hyphenated form of a uuid written
// in its 36-character form (any case), or false: the one form ids take in
// keys.
func CanonicalUUID(s string) (string, bool) {
	u, err := uuid.Parse(s)
	if err != nil || len(s) != 36 {
		return "", false
	}
	return u.String(), true
}

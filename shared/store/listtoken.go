package store

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// The lists read through Page (keys, users, the audit log, webhooks and
// their delivery log) hand out tokens that name a start key. sealToken adds
// a checksum over the list's view (company, filters) and the key, so an
// edited token, another company's or another list's is ErrBadPageToken
// instead of a page that starts somewhere else. As with encodeToken, the
// checksum is no secret: the partition and range checks of the read keep a
// forged token inside its list.

// sealToken returns raw (a key token, "" at the end of the list) with the
// checksum of view appended.
func sealToken(view, raw string) string {
	if raw == "" {
		return ""
	}
	return raw + "." + base64.RawURLEncoding.EncodeToString(viewSum(view, raw))
}

// openToken checks a token of sealToken against view and returns the key
// token inside ("" for no token).
func openToken(view, token string) (string, error) {
	if token == "" {
		return "", nil
	}
	raw, sum, ok := strings.Cut(token, ".")
	if !ok || len(token) > maxTokenLength {
		return "", ErrBadPageToken
	}
	got, err := base64.RawURLEncoding.DecodeString(sum)
	if err != nil || raw == "" || !bytes.Equal(got, viewSum(view, raw)) {
		return "", ErrBadPageToken
	}
	return raw, nil
}

func viewSum(view, raw string) []byte { return checksum("view\x00"+view, []byte(raw)) }

// listView names a list and its filters for sealToken.
func listView(parts ...string) string { return strings.Join(parts, "\x00") }

package norm

import (
	"net/url"
	"path"
	"strings"

	"github.com/acme/codescan-api/shared/cleantext"
)

// Reasons a path is refused; they are keys of finding.Report.Dropped.
const (
	Absolute = "absolute_path"
	Outside  = "path_outside_repository"
	TooLong  = "path_too_long"
)

// MaxPath bounds a stored path: it is part of DynamoDB sort keys (at most
// 1,024 bytes) beside other parts.
const MaxPath = 768

// Path returns p in the one form findings store, relative to the
// repository root with forward slashes and clean ("" for an empty path),
// or the reason it cannot be: absolute, or climbing out of the repository.
// Backslashes become slashes; a file: scheme and percent-escapes are
// decoded before cleaning, so `%2e%2e/` climbs out too. The path is
// NFC-normalized: a name a file system keeps decomposed (é as e and a
// combining accent) and its composed spelling are one file, in reports and
// uploaded sources alike.
//
// Once decoded, the path follows the edge's text rule (cleantext.Visible):
// a control or bidi control character, sent raw or percent-encoded
// (`%1b`), is written out as `<U+XXXX>` and an invalid byte (`%ff`) is
// U+FFFD, before the length is checked. POST /code-upload runs the same
// function on the path it is sent and its edge refuses those characters,
// so there the rule changes nothing, while a report's path is kept, cleaned,
// and a client can upload the file under the path the issue shows: it
// normalises to itself. Two paths stay without their file: one holding a
// `%` and two hex digits after decoding (the upload decodes them once more)
// and one with a segment over 255 bytes (the edge's bound); their issues
// show the report's own snippet only.
func Path(p string) (string, string) {
	p = cleantext.Visible(Unscheme(p))
	if p == "" {
		return "", ""
	}
	if IsAbs(p) {
		return "", Absolute
	}
	p = path.Clean(p)
	switch {
	case IsAbs(p): // `x/../C:/y`
		return "", Absolute
	case p == ".":
		return "", ""
	case p == ".." || strings.HasPrefix(p, "../"):
		return "", Outside
	case len(p) > MaxPath:
		return "", TooLong
	}
	return p, ""
}

// Unscheme decodes a path or file URI into a slash path without cleaning
// it: `file:///a/b` is `/a/b`, `C:\x` is `C:/x`, `a%20b` is `a b`.
func Unscheme(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if rest, ok := CutPrefixFold(p, "file://"); ok {
		p = rest
	} else if rest, ok := CutPrefixFold(p, "file:"); ok {
		p = rest
	}
	if dec, err := url.PathUnescape(p); err == nil {
		p = dec
	}
	return p
}

// IsAbs tells whether a slash path is rooted: `/x`, a drive (`C:/x`), or
// another URI scheme (`https://...`).
func IsAbs(p string) bool {
	if strings.HasPrefix(p, "/") {
		return true
	}
	i := strings.IndexByte(p, ':')
	return i > 0 && !strings.Contains(p[:i], "/")
}

// Within returns p relative to root when p lies strictly under it (both
// absolute slash paths).
func Within(p, root string) (string, bool) {
	p, root = path.Clean(p), path.Clean(root)
	if !strings.HasPrefix(root, "/") || root == "/" {
		return "", false
	}
	rest, ok := strings.CutPrefix(p, root+"/")
	return rest, ok && rest != ""
}

// CutPrefixFold is strings.CutPrefix ignoring ASCII case.
func CutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return "", false
}

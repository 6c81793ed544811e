package norm

import (
	"net/url"
	"path"
	"strings"

	"golang.org/x/text/unicode/norm"
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
func Path(p string) (string, string) {
	p = norm.NFC.String(Unscheme(p))
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

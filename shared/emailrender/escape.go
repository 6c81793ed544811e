package emailrender

import (
	"fmt"
	"strings"
)

// htmlEscaper escapes a value for HTML element text and quoted attribute
// values. It escapes what html/template escaped there, so the emails stay
// byte for byte what the templates rendered: NUL becomes U+FFFD and '+'
// is escaped too (a UTF-7 guard of html/template).
var htmlEscaper = strings.NewReplacer(
	"\x00", "\uFFFD", `"`, "&#34;", "&", "&amp;", "'", "&#39;", "+", "&#43;", "<", "&lt;", ">", "&gt;",
)

// html escapes s for element text.
func html(s string) string { return htmlEscaper.Replace(s) }

// safeSchemes are the URL schemes a link may have; any other (javascript:,
// data:, vbscript: ...) is replaced by a harmless fragment.
var safeSchemes = []string{"http", "https", "mailto"}

// unsafeURL replaces a link whose scheme is not safe (the marker
// html/template used).
const unsafeURL = "#ZgotmplZ"

// hrefValue makes s the value of a double-quoted href attribute: a link
// with an unsafe scheme is dropped; the unreserved characters, the
// delimiters (but the quote and parentheses, so the URL is safe in any
// attribute) and existing %XX escapes stand for themselves, every other
// byte is percent-encoded; the result is escaped for the attribute.
func hrefValue(s string) string {
	if scheme, _, ok := strings.Cut(s, ":"); ok && !strings.Contains(scheme, "/") {
		safe := false
		for _, ok := range safeSchemes {
			safe = safe || strings.EqualFold(scheme, ok)
		}
		if !safe {
			return unsafeURL
		}
	}
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		escaped := c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])
		if escaped || isAlnum(c) || strings.IndexByte("-._~!#$&*+,/:;=?@[]", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02x", c)
		}
	}
	return html(b.String())
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// Package pathglob is the one path glob of the product: triage rules'
// matcher.path and blocking rules' conditions.paths (and every future
// matcher over a file path) are compiled here, once, to an RE2 regular
// expression. RE2 matches in time linear in the path whatever the
// pattern, so a rule's author cannot make matching expensive, as the
// backtracking expansion of `{a,b}` groups could (each `{*,*}` doubled the
// time of a match).
//
// The syntax is doublestar's (github.com/bmatcuk/doublestar/v4, which
// still checks it): `*` any run of characters but `/`; `?` one character
// but `/`; `[abc]`, `[a-z]`, `[!a]` or `[^a]` one character of a class,
// never `/`; `{a,b}` one of the alternatives, which may nest and hold `/`;
// `**` as a whole path component any number of directories (`a/**/b`
// matches `a/b` and `a/x/y/b`, `a/**` matches `a` and everything below it,
// `**/b` matches `b` anywhere); `**` inside a component is `*`; `\`
// escapes the next character. Matching is case-sensitive.
package pathglob

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// MaxLen is the longest pattern accepted, in bytes.
const MaxLen = 500

// MaxWildcards bounds the `*`, `**` and `?` of a pattern: each costs a
// step per character of the path in the worst case (32 of them match a
// 1,024-byte path in well under a millisecond; see the benchmark), and no
// path filter needs more.
const MaxWildcards = 32

// MaxProgram bounds the compiled program (RE2 instructions): matching
// costs the path's length times at most this many steps. The largest
// pattern of ordinary use (a 500-byte list of alternatives) stays well
// under it; see the benchmark for the worst pattern it admits.
const MaxProgram = 2000

// Glob is a compiled pattern.
type Glob struct {
	pattern string
	re      *regexp.Regexp
}

// ErrInvalid wraps every reason a pattern is refused.
var ErrInvalid = errors.New("not a valid glob")

// Compile checks a pattern and compiles it.
func Compile(pattern string) (*Glob, error) {
	switch {
	case pattern == "":
		return nil, fmt.Errorf("%w: empty", ErrInvalid)
	case len(pattern) > MaxLen:
		return nil, fmt.Errorf("%w: exceeds %d bytes", ErrInvalid, MaxLen)
	case !doublestar.ValidatePattern(pattern):
		return nil, fmt.Errorf("%w: unbalanced braces or brackets, or a trailing backslash", ErrInvalid)
	case wildcards(collapse(pattern)) > MaxWildcards:
		return nil, fmt.Errorf("%w: more than %d wildcards (*, ** and ?)", ErrInvalid, MaxWildcards)
	}
	expr := `\A(?s:` + translate(collapse(pattern)) + `)\z`
	parsed, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	prog, err := syntax.Compile(parsed.Simplify())
	if err != nil || len(prog.Inst) > MaxProgram {
		return nil, fmt.Errorf("%w: too complex (more alternatives and wildcards than a path filter needs)", ErrInvalid)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return &Glob{pattern: pattern, re: re}, nil
}

// Valid reports whether a pattern compiles.
func Valid(pattern string) error {
	_, err := Cached(pattern)
	return err
}

// Match reports whether path matches g.
func (g *Glob) Match(path string) bool { return g.re.MatchString(path) }

// String is the pattern as written.
func (g *Glob) String() string { return g.pattern }

// cache keeps the globs of stored rules compiled between matches: rules
// are read from the table as patterns, and a scan matches each against
// every finding. It is dropped whole when full, which only costs
// compiling again.
var cache = struct {
	sync.Mutex
	m map[string]*Glob
}{m: map[string]*Glob{}}

const cacheSize = 4096

// Cached is Compile through a process-wide cache.
func Cached(pattern string) (*Glob, error) {
	cache.Lock()
	g, ok := cache.m[pattern]
	cache.Unlock()
	if ok {
		return g, nil
	}
	g, err := Compile(pattern)
	if err != nil {
		return nil, err
	}
	cache.Lock()
	if len(cache.m) >= cacheSize {
		clear(cache.m)
	}
	cache.m[pattern] = g
	cache.Unlock()
	return g, nil
}

// Match reports whether path matches pattern; a pattern that does not
// compile matches nothing (stored patterns were checked when written).
func Match(pattern, path string) bool {
	g, err := Cached(pattern)
	return err == nil && g.Match(path)
}

// translate turns a checked pattern into a regular expression.
func translate(p string) string {
	var b strings.Builder
	depth := 0 // of braces
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			_, n := utf8.DecodeRuneInString(p[i+1:])
			b.WriteString(regexp.QuoteMeta(p[i+1 : i+1+n]))
			i += n
		case c == '/' && isStarStar(p, i+1):
			// "/**" ending a component: nothing, or "/" and anything.
			b.WriteString(`(?:/.*)?`)
			i += 2
		case c == '*' && isStarStar(p, i) && i == 0:
			i++
			if i+1 < len(p) && p[i+1] == '/' {
				b.WriteString(`(?:.*/)?`) // "**/" leading: any directories, or none
				i++
			} else {
				b.WriteString(`.*`)
			}
		case c == '*':
			for i+1 < len(p) && p[i+1] == '*' {
				i++ // "**" inside a component is "*"
			}
			b.WriteString(`[^/]*`)
		case c == '?':
			b.WriteString(`[^/]`)
		case c == '[':
			i = class(&b, p, i)
		case c == '{':
			depth++
			b.WriteString(`(?:`)
		case c == '}' && depth > 0:
			depth--
			b.WriteString(`)`)
		case c == ',' && depth > 0:
			b.WriteString(`|`)
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	return b.String()
}

// collapse writes runs of "**" components once: "a/**/**/b" means
// "a/**/b", and each would otherwise be a state live at every character.
func collapse(p string) string {
	for strings.Contains(p, "/**/**/") {
		p = strings.ReplaceAll(p, "/**/**/", "/**/")
	}
	for strings.HasPrefix(p, "**/**/") {
		p = p[3:]
	}
	for strings.HasSuffix(p, "/**/**") {
		p = p[:len(p)-3]
	}
	if p == "**/**" {
		p = "**"
	}
	return p
}

// wildcards counts the runs of stars and the question marks of a pattern
// outside classes and escapes.
func wildcards(p string) int {
	n := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			i += strings.IndexByte(p[i+1:], ']') + 1
		case '?':
			n++
		case '*':
			n++
			for i+1 < len(p) && p[i+1] == '*' {
				i++
			}
		}
	}
	return n
}

// nothing is a regular expression that matches no character.
const nothing = `[^\x00-\x{10FFFF}]`

// isStarStar reports whether p holds "**" at i as a whole component: at
// the start or after "/", and followed by the end or "/".
func isStarStar(p string, i int) bool {
	if !strings.HasPrefix(p[i:], "**") {
		return false
	}
	if i > 0 && p[i-1] != '/' {
		return false
	}
	return i+2 == len(p) || p[i+2] == '/'
}

// class writes the character class that starts at p[i] and returns the
// index of its closing bracket. A class never matches "/".
func class(b *strings.Builder, p string, i int) int {
	i++
	negated := i < len(p) && (p[i] == '!' || p[i] == '^')
	if negated {
		i++
	}
	var items []rune // pairs lo, hi
	for p[i] != ']' {
		var lo, hi rune
		lo, i = classChar(p, i)
		hi = lo
		if p[i] == '-' && p[i+1] != ']' {
			hi, i = classChar(p, i+1)
		}
		items = append(items, lo, hi)
	}
	switch {
	case negated:
		b.WriteString(`[^/`)
		writeRanges(b, items)
		b.WriteString(`]`)
	case len(withoutSlash(items)) == 0:
		b.WriteString(nothing) // only "/" was named
	default:
		b.WriteString(`[`)
		writeRanges(b, withoutSlash(items))
		b.WriteString(`]`)
	}
	return i
}

// classChar reads one (possibly escaped) character of a class at p[i] and
// returns it with the index after it.
func classChar(p string, i int) (rune, int) {
	if p[i] == '\\' {
		i++
	}
	r, n := utf8.DecodeRuneInString(p[i:])
	return r, i + n
}

// withoutSlash removes "/" from ranges.
func withoutSlash(items []rune) []rune {
	var out []rune
	for k := 0; k < len(items); k += 2 {
		lo, hi := items[k], items[k+1]
		if lo > hi || hi < '/' || lo > '/' {
			out = append(out, lo, hi)
			continue
		}
		if lo < '/' {
			out = append(out, lo, '/'-1)
		}
		if hi > '/' {
			out = append(out, '/'+1, hi)
		}
	}
	return out
}

func writeRanges(b *strings.Builder, items []rune) {
	for k := 0; k < len(items); k += 2 {
		fmt.Fprintf(b, `\x{%x}-\x{%x}`, items[k], items[k+1])
	}
}

// Package eventfilter compiles and runs the filter expressions of
// notification destinations (webhook and chat endpoints, email
// preferences): CEL expressions (github.com/google/cel-go) over a typed
// Event, compiled and type-checked when they are saved, refused when their
// static cost estimate exceeds MaxCost, and run with CEL's runtime cost
// limit, so nothing a tenant writes can run long.
package eventfilter

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/ext"
)

// Bounds of an expression and of what it sees.
const (
	// MaxLength bounds an expression's source, in bytes.
	MaxLength = 2000
	// MaxCost bounds an expression's estimated worst-case cost (CEL cost
	// units: about one per operation on a value, one per ten characters or
	// list members a function walks) and its cost at run time.
	MaxCost = 200_000
	// MaxNewFindings bounds Event.NewFindings.
	MaxNewFindings = 200
	// MaxText bounds every string an expression sees, in characters.
	MaxText = 1024
	// MaxListed bounds the lists and maps of Event.Data.
	MaxListed = 100
	// maxDepth bounds the nesting of Event.Data (deeper values are dropped).
	maxDepth = 6
	// maxRecursion bounds the parser's nesting of the expression.
	maxRecursion = 32
)

// Error is an expression refused when saved: where (1-based line and
// column, 0 when it is about the whole expression) and why.
type Error struct {
	Line, Column int
	Message      string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.Message
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Message)
}

// Filter is a compiled expression.
type Filter struct {
	src  string
	prg  cel.Program
	cost uint64 // the static estimate's maximum
}

// Source is the expression the filter was compiled from.
func (f *Filter) Source() string { return f.src }

// EstimatedCost is the static estimate of the expression's worst-case cost.
func (f *Filter) EstimatedCost() uint64 { return f.cost }

var env = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		ext.NativeTypes(ext.ParseStructTags(true), reflect.TypeFor[Event]()),
		cel.Variable("event", cel.ObjectType("eventfilter.Event")),
		cel.ParserExpressionSizeLimit(MaxLength),
		cel.ParserRecursionLimit(maxRecursion),
	)
})

// Compile parses, type-checks and costs src. An empty src is no filter
// (nil, nil): the destination receives every event of its types.
func Compile(src string) (*Filter, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	if err := checkText(src); err != nil {
		return nil, err
	}
	e, err := env()
	if err != nil {
		return nil, err
	}
	ast, iss := e.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, issueError(iss)
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		return nil, &Error{Message: fmt.Sprintf("the expression must return a bool, not %s", ast.OutputType())}
	}
	est, err := e.EstimateCost(ast, sizes{})
	if err != nil {
		return nil, &Error{Message: "the expression's cost cannot be estimated: " + err.Error()}
	}
	if est.Max > MaxCost {
		return nil, &Error{Message: fmt.Sprintf("the expression may cost up to %s, more than the limit of %d: iterate less (no nested loops over lists)", costText(est.Max), MaxCost)}
	}
	prg, err := e.Program(ast, cel.CostLimit(MaxCost), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, &Error{Message: err.Error()}
	}
	return &Filter{src: src, prg: prg, cost: est.Max}, nil
}

func costText(c uint64) string {
	if c == ^uint64(0) {
		return "an unbounded amount"
	}
	return fmt.Sprintf("%d", c)
}

// checkText refuses what is no expression text: too long, not UTF-8,
// control characters other than tab and line breaks.
func checkText(src string) error {
	if len(src) > MaxLength {
		return &Error{Message: fmt.Sprintf("the expression must be at most %d bytes", MaxLength)}
	}
	if !utf8.ValidString(src) {
		return &Error{Message: "the expression must be UTF-8 text"}
	}
	line, col := 1, 1
	for _, r := range src {
		if r == '\n' {
			line, col = line+1, 1
			continue
		}
		if (unicode.IsControl(r) && r != '\t' && r != '\r') || unicode.Is(unicode.Cf, r) {
			return &Error{Line: line, Column: col, Message: fmt.Sprintf("control or format character U+%04X is not allowed", r)}
		}
		col++
	}
	return nil
}

// issueError is the first of CEL's issues, with its position.
func issueError(iss *cel.Issues) error {
	errs := iss.Errors()
	if len(errs) == 0 {
		return &Error{Message: iss.Err().Error()}
	}
	first := errs[0]
	out := &Error{Message: first.Message}
	if loc := first.Location; loc != nil && loc.Line() > 0 {
		out.Line, out.Column = loc.Line(), loc.Column()+1
	}
	return out
}

// ErrNotBool is a result that is no bool (an expression over event.data
// may give one at run time).
var ErrNotBool = errors.New("the expression did not return a bool")

// Match runs the filter on ev; a nil filter matches everything. An error
// (the cost limit reached, a missing key of event.data, ...) is for the
// caller to log: the event is not selected.
func (f *Filter) Match(ev Event) (bool, error) {
	if f == nil {
		return true, nil
	}
	out, _, err := f.prg.Eval(map[string]any{"event": ev})
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, ErrNotBool
	}
	return b, nil
}

// Classes of a failed evaluation (Failure), what logs and the dry run
// report: never the error's text, which may quote the event.
const (
	FailureCostLimit  = "cost_limit"       // the runtime cost limit was reached
	FailureEvaluation = "evaluation_error" // anything else (a missing key of event.data, ...)
)

// Failure is the class of an error of Match.
func Failure(err error) string {
	if strings.Contains(err.Error(), "cost limit") {
		return FailureCostLimit
	}
	return FailureEvaluation
}

// Check is Compile of a filter about to be stored: the source to store
// (trimmed; "" is no filter), or the *Error that refuses it.
func Check(src string) (string, error) {
	if _, err := Compile(src); err != nil {
		return "", err
	}
	return strings.TrimSpace(src), nil
}

// sizes is the cost estimator's knowledge of the sizes of what an
// expression sees (CEL otherwise assumes any size, and refuses nothing
// that loops).
type sizes struct{}

func (sizes) EstimateSize(n checker.AstNode) *checker.SizeEstimate {
	switch n.Type().Kind() {
	case cel.StringKind, cel.BytesKind:
		return &checker.SizeEstimate{Min: 0, Max: MaxText}
	case cel.ListKind:
		if p := n.Path(); len(p) > 0 && p[len(p)-1] == "new_findings" {
			return &checker.SizeEstimate{Min: 0, Max: MaxNewFindings}
		}
		return &checker.SizeEstimate{Min: 0, Max: MaxListed}
	case cel.MapKind:
		return &checker.SizeEstimate{Min: 0, Max: MaxListed}
	case cel.DynKind:
		return &checker.SizeEstimate{Min: 0, Max: max(MaxText, MaxListed)}
	}
	return nil
}

func (sizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// cache holds compiled filters by source for Cached (a process's
// destinations share few expressions); emptied when full.
var cache = struct {
	sync.Mutex
	m map[string]*Filter
}{m: map[string]*Filter{}}

const cacheSize = 512

// Cached is Compile of a stored expression, compiled once per process.
func Cached(src string) (*Filter, error) {
	cache.Lock()
	f, ok := cache.m[src]
	cache.Unlock()
	if ok {
		return f, nil
	}
	f, err := Compile(src)
	if err != nil {
		return nil, err
	}
	cache.Lock()
	if len(cache.m) >= cacheSize {
		clear(cache.m)
	}
	cache.m[src] = f
	cache.Unlock()
	return f, nil
}

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

func parse(t *testing.T, src string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package p\n"+src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestStartsGoroutine(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       bool
	}{
		{"go statement", `func f() { go g() }`, true},
		{"go closure", `func f() { go func() {}() }`, true},
		{"WaitGroup.Go", `func f() { var wg sync.WaitGroup; wg.Go(func() {}) }`, true},
		{"errgroup", `func f() { g.Go(func() error { return nil }) }`, true},
		{"store's Parallel", `func f() { tb.Parallel(ctx, 4, do) }`, true},
		{"BatchPutParallel", `func f() { tb.BatchPutParallel(ctx, items) }`, true},
		{"parallel test", `func TestX(t *testing.T) { t.Parallel() }`, false},
		{"a call named go-like", `func f() { gopher(); Good(1) }`, false},
		{"no calls", `var x = 1`, false},
	} {
		if got := startsGoroutine(parse(t, c.body)); got != c.want {
			t.Errorf("%s: startsGoroutine = %v, want %v", c.name, got, c.want)
		}
	}
}

// A test is raced when it starts a goroutine, or calls (through any depth
// of the files' functions and methods) one that does; a goroutine started
// outside any function races every test.
func TestRacedTests(t *testing.T) {
	files := []*ast.File{parse(t, `
func TestDirect(t *testing.T) { t.Parallel(); go work() }
func TestThroughHelpers(t *testing.T) { w := world(t); w.upload(t) }
func TestPlain(t *testing.T) { t.Parallel(); world(t).check(t) }
func TestMain(m *testing.M) { go serve(); m.Run() }
func world(t *testing.T) *w { return &w{} }
func (w *w) upload(t *testing.T) { w.both(t) }
`), parse(t, `
func (w *w) both(t *testing.T) { var g errgroup.Group; g.Go(func() error { return nil }) }
func (w *w) check(t *testing.T) {}
func TestSecondFile(t *testing.T) { (&w{}).both(t) }
`)}
	if got := racedTests(files); !slices.Equal(got, []string{"TestDirect", "TestThroughHelpers", "TestSecondFile"}) {
		t.Errorf("raced tests %v", got)
	}
	if got := testNames(files); !slices.Equal(got, []string{"TestDirect", "TestThroughHelpers", "TestPlain", "TestSecondFile"}) {
		t.Errorf("tests %v", got)
	}
	if got := racedTests([]*ast.File{parse(t, `var _ = func() { go work() }
func TestX(t *testing.T) {}`)}); got != nil {
		t.Errorf("a goroutine outside a function: %v, want the package whole", got)
	}
}

// The module's own split: the store's parallel writers and the lease are
// raced whole; the bulk operations' worker only in the test that starts
// workers side by side; a package of pure functions not at all; every
// package not raced whole runs plain, those tests skipped; packages served
// by DynamoDB Local start first, the most test source first.
func TestModuleSplit(t *testing.T) {
	const m = "github.com/acme/codescan-api/"
	pkgs, err := listPackages(m + "...")
	if err != nil {
		t.Fatal(err)
	}
	s, err := split(pkgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"shared/store/ddb", "shared/store/internal/lease", "shared/store/findings"} {
		if !slices.Contains(s.race, m+p) || slices.Contains(s.plain, m+p) {
			t.Errorf("%s is not raced whole", p)
		}
	}
	for _, p := range []string{"shared/bulktriage", "functions/uploads", "shared/cwe", "shared/pathglob"} {
		if slices.Contains(s.race, m+p) || !slices.Contains(s.plain, m+p) {
			t.Errorf("%s is raced whole", p)
		}
	}
	if !slices.Contains(s.partial, m+"shared/bulktriage") || slices.Contains(s.partial, m+"shared/cwe") {
		t.Errorf("partial %v", s.partial)
	}
	if !slices.Contains(s.names, "TestCheckpointRefusesStaleDeliveries") || slices.Contains(s.names, "TestBadInputCreatesNothing") {
		t.Errorf("raced tests %v", s.names)
	}
	if slices.Index(s.plain, m+"functions/uploads") > slices.Index(s.plain, m+"shared/demo") ||
		slices.Index(s.plain, m+"shared/demo") > slices.Index(s.plain, m+"shared/cwe") {
		t.Errorf("not the uploads' long tests, then the demo's (DynamoDB Local), then a parser's: %v", s.plain)
	}
	if len(s.race)+len(s.plain) != len(pkgs) {
		t.Errorf("%d raced whole and %d plain of %d packages", len(s.race), len(s.plain), len(pkgs))
	}
}

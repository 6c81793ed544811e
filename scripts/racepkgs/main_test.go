package main

import (
	"go/parser"
	"go/token"
	"testing"
)

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
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package p\n"+c.body, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := startsGoroutine(f); got != c.want {
			t.Errorf("%s: startsGoroutine = %v, want %v", c.name, got, c.want)
		}
	}
}

// The module's own split: the store's parallel writers and the lease are
// raced; a package of pure functions is not.
func TestModuleSplit(t *testing.T) {
	const m = "github.com/acme/codescan-api/"
	pkgs, err := listPackages(m + "...")
	if err != nil {
		t.Fatal(err)
	}
	raced := map[string]bool{}
	for _, p := range pkgs {
		c, err := startsGoroutines(p.dir, p.files)
		if err != nil {
			t.Fatal(err)
		}
		raced[p.path] = c
	}
	for path, want := range map[string]bool{
		m + "shared/store/ddb":            true,
		m + "shared/store/internal/lease": true,
		m + "shared/store":                true,
		m + "shared/cwe":                  false,
		m + "shared/pathglob":             false,
	} {
		got, ok := raced[path]
		if !ok {
			t.Errorf("%s not listed", path)
		} else if got != want {
			t.Errorf("%s: raced = %v, want %v", path, got, want)
		}
	}
}

// Command racepkgs splits the module's tests for make test between the
// race detector, which finds races only where goroutines run, and a plain
// run, in about two thirds of the time. A package whose code starts
// goroutines (a go statement, or a call to Go or Parallel: an errgroup, a
// WaitGroup, the store's parallel writers) has all its tests raced; in a
// package where only tests start them, only those tests are (a test that
// starts one, or calls a function of the package's tests that does); every
// other test runs plain.
//
// It prints shell assignments for make test to eval:
//
//	race     the packages whose tests all run under the race detector
//	partial  the packages that have a test named in names
//	names    the raced tests of the other packages, as a regexp alternation
//	plain    every package not in race, to run with names skipped
//
// A test named in names runs raced in every package of partial, so that a
// test of the same name in another package is not skipped everywhere.
// Each list puts first the packages whose tests run against DynamoDB Local
// (their TestMain is testenv's), those with the most test source first,
// then the others (whose tests take milliseconds): go test starts them in
// that order, so that the longest do not run last, alone.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	if len(os.Args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: racepkgs (prints race=, partial=, names=, plain= for a shell to eval)")
		os.Exit(2)
	}
	pkgs, err := listPackages("./...")
	if err != nil {
		fmt.Fprintln(os.Stderr, "racepkgs:", err)
		os.Exit(1)
	}
	s, err := split(pkgs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "racepkgs:", err)
		os.Exit(1)
	}
	fmt.Printf("race='%s'\npartial='%s'\nnames='%s'\nplain='%s'\n", strings.Join(s.race, " "),
		strings.Join(s.partial, " "), strings.Join(s.names, "|"), strings.Join(s.plain, " "))
}

type pkg struct {
	path, dir string
	code      []string // the package's own Go files
	tests     []string // its test files, in package and external
}

// listPackages is every package pattern names, with its Go files and its
// test files.
func listPackages(pattern string) ([]pkg, error) {
	out, err := exec.Command("go", "list", "-f",
		"{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}\t{{join .TestGoFiles \" \"}} {{join .XTestGoFiles \" \"}}", pattern).Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 4)
		if len(f) != 4 {
			return nil, fmt.Errorf("go list: unexpected line %q", sc.Text())
		}
		pkgs = append(pkgs, pkg{path: f[0], dir: f[1], code: strings.Fields(f[2]), tests: strings.Fields(f[3])})
	}
	return pkgs, sc.Err()
}

// theSplit is what main prints.
type theSplit struct {
	race, partial, names, plain []string
}

func split(pkgs []pkg) (theSplit, error) {
	var s theSplit
	tests := map[string][]string{} // the tests of each package not raced whole
	weight := map[string]int64{}   // the order to start them in: see main
	for _, p := range pkgs {
		code, err := parseFiles(p.dir, p.code)
		if err != nil {
			return s, err
		}
		files, err := parseFiles(p.dir, p.tests)
		if err != nil {
			return s, err
		}
		if servedByDynamoDB(files) {
			weight[p.path] = 1 << 40
		}
		whole := slices.ContainsFunc(code, func(f *ast.File) bool { return startsGoroutine(f) })
		raced := racedTests(files)
		if whole || raced == nil {
			s.race = append(s.race, p.path)
			continue
		}
		s.plain = append(s.plain, p.path)
		s.names = append(s.names, raced...)
		tests[p.path] = testNames(files)
	}
	slices.Sort(s.names)
	s.names = slices.Compact(s.names)
	for _, p := range pkgs {
		for _, name := range p.tests {
			if fi, err := os.Stat(filepath.Join(p.dir, name)); err == nil {
				weight[p.path] += fi.Size()
			}
		}
	}
	heaviestFirst := func(a, b string) int { return cmp.Or(cmp.Compare(weight[b], weight[a]), cmp.Compare(a, b)) }
	slices.SortFunc(s.race, heaviestFirst)
	slices.SortFunc(s.plain, heaviestFirst)
	for _, p := range s.plain {
		if slices.ContainsFunc(tests[p], func(n string) bool { _, ok := slices.BinarySearch(s.names, n); return ok }) {
			s.partial = append(s.partial, p)
		}
	}
	return s, nil
}

func parseFiles(dir string, names []string) ([]*ast.File, error) {
	fset := token.NewFileSet()
	var out []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// concurrentCalls are the methods that run the functions given to them on
// goroutines of their own: errgroup.Group's and sync.WaitGroup's Go, the
// store's Parallel and BatchPutParallel.
var concurrentCalls = map[string]bool{"Go": true, "Parallel": true, "BatchPutParallel": true}

// startsGoroutine tells whether n (a file, a function) starts a goroutine.
func startsGoroutine(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			found = true
		case *ast.CallExpr:
			// testing.T's Parallel takes no argument: a parallel test is
			// not a goroutine of the code under test.
			if name := calleeName(n); concurrentCalls[name] && len(n.Args) > 0 {
				found = true
			}
		}
		return !found
	})
	return found
}

// calleeName is the name a call calls: a function's, or a method's
// (whatever its receiver).
func calleeName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// racedTests are the tests of the files that start a goroutine themselves
// or through the files' functions they call (by name: a method counts for
// every receiver); nil when the files start one outside any function (a
// variable's initializer), which races the package whole.
func racedTests(files []*ast.File) []string {
	starts, calls := map[string]bool{}, map[string][]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				if startsGoroutine(d) {
					return nil
				}
				continue
			}
			starts[fd.Name.Name] = starts[fd.Name.Name] || startsGoroutine(fd)
			ast.Inspect(fd, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					calls[fd.Name.Name] = append(calls[fd.Name.Name], calleeName(c))
				}
				return true
			})
		}
	}
	for changed := true; changed; { // until no caller of a starter is left unmarked
		changed = false
		for name, callees := range calls {
			if !starts[name] && slices.ContainsFunc(callees, func(c string) bool { return starts[c] }) {
				starts[name], changed = true, true
			}
		}
	}
	out := []string{}
	for _, f := range files {
		for _, name := range topTests(f) {
			if starts[name] {
				out = append(out, name)
			}
		}
	}
	return out
}

// servedByDynamoDB tells whether the files' TestMain is testenv's: the
// package's tests run against DynamoDB Local.
func servedByDynamoDB(files []*ast.File) bool {
	found := false
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "testenv" && strings.HasPrefix(sel.Sel.Name, "Main") {
					found = true
				}
			}
			return !found
		})
	}
	return found
}

// testNames are the names of the files' tests.
func testNames(files []*ast.File) []string {
	var out []string
	for _, f := range files {
		out = append(out, topTests(f)...)
	}
	return out
}

// topTests are the names of a file's test functions (TestXxx, no receiver).
func topTests(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") && fd.Name.Name != "TestMain" {
			out = append(out, fd.Name.Name)
		}
	}
	return out
}

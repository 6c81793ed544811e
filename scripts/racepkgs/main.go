// Command racepkgs splits the module's packages for make test: those whose
// code or tests start goroutines (a go statement, or a call to Go or
// Parallel: an errgroup, a WaitGroup, the store's parallel writers) run
// under the race detector, where it can find a race; the rest, single
// goroutine throughout, run without it, in about two thirds of the time.
//
//	racepkgs race    the packages to test under the race detector
//	racepkgs plain   the others
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "race" && os.Args[1] != "plain") {
		fmt.Fprintln(os.Stderr, "usage: racepkgs race|plain")
		os.Exit(2)
	}
	pkgs, err := listPackages("./...")
	if err != nil {
		fmt.Fprintln(os.Stderr, "racepkgs:", err)
		os.Exit(1)
	}
	want := os.Args[1] == "race"
	for _, p := range pkgs {
		concurrent, err := startsGoroutines(p.dir, p.files)
		if err != nil {
			fmt.Fprintln(os.Stderr, "racepkgs:", err)
			os.Exit(1)
		}
		if concurrent == want {
			fmt.Println(p.path)
		}
	}
}

type pkg struct {
	path, dir string
	files     []string
}

// listPackages is every package pattern names, with its Go files, tests
// included.
func listPackages(pattern string) ([]pkg, error) {
	out, err := exec.Command("go", "list", "-f",
		"{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}} {{join .TestGoFiles \" \"}} {{join .XTestGoFiles \" \"}}", pattern).Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("go list: unexpected line %q", sc.Text())
		}
		pkgs = append(pkgs, pkg{path: f[0], dir: f[1], files: strings.Fields(f[2])})
	}
	return pkgs, sc.Err()
}

// startsGoroutines tells whether any of the files starts a goroutine.
func startsGoroutines(dir string, files []string) (bool, error) {
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return false, err
		}
		if startsGoroutine(f) {
			return true, nil
		}
	}
	return false, nil
}

// concurrentCalls are the methods that run the functions given to them on
// goroutines of their own: errgroup.Group's and sync.WaitGroup's Go, the
// store's Parallel and BatchPutParallel.
var concurrentCalls = map[string]bool{"Go": true, "Parallel": true, "BatchPutParallel": true}

func startsGoroutine(f *ast.File) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			found = true
		case *ast.CallExpr:
			// testing.T's Parallel takes no argument: a parallel test is
			// not a goroutine of the code under test.
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && concurrentCalls[sel.Sel.Name] && len(n.Args) > 0 {
				found = true
			}
		}
		return !found
	})
	return found
}

package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// workers are the shared packages that, like the groups, are given the
// narrow store interface they declare, never the concrete store.
var workers = []string{
	"./shared/httpapi", "./shared/auth", "./shared/deliveryengine", "./shared/sweep",
	"./shared/notify", "./shared/recount", "./shared/ingest", "./shared/bulktriage",
	"./shared/exportjob", "./shared/prdecor", "./shared/tickets", "./shared/prtriage", "./shared/gate",
	"./shared/scanlife",
}

const storePkg = module + "shared/store"

// concreteStore lists the non-test files of the groups (their cmd mains
// excepted: they compose) and of the shared workers that name *store.Store.
func concreteStore() []string {
	var bad []string
	args := append([]string{"-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", "./functions/..."}, workers...)
	for _, line := range strings.Split(strings.TrimSpace(goList(args...)), "\n") {
		pkg, rest, _ := strings.Cut(line, "\t")
		dir, files, _ := strings.Cut(rest, "\t")
		if strings.Contains(pkg, "/cmd/") || strings.HasSuffix(pkg, "/cmd") {
			continue
		}
		for _, f := range strings.Fields(files) {
			path := filepath.Join(dir, f)
			src, err := os.ReadFile(path)
			if err != nil {
				bad = append(bad, err.Error())
				continue
			}
			lines, err := storePointers(path, src)
			if err != nil {
				bad = append(bad, err.Error())
			}
			if wd, err := os.Getwd(); err == nil {
				if rel, err := filepath.Rel(wd, path); err == nil {
					path = rel
				}
			}
			for _, l := range lines {
				bad = append(bad, fmt.Sprintf("%s:%d names *store.Store outside its composition (func XOf(st *store.Store) X { return X{Area: st.Area} }); declare the calls it makes per area beside it", path, l))
			}
		}
	}
	return bad
}

// storePointers returns the lines of src that name *store.Store (under
// whatever name the file imports the store package).
func storePointers(filename string, src []byte) ([]int, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == storePkg {
			name = "store"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" || name == "_" {
		return nil, nil
	}
	var lines []int
	ast.Inspect(f, func(n ast.Node) bool {
		if fd, ok := n.(*ast.FuncDecl); ok && isComposition(fd) {
			return false
		}
		star, ok := n.(*ast.StarExpr)
		if !ok {
			return true
		}
		if sel, ok := star.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Store" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
				lines = append(lines, fset.Position(star.Pos()).Line)
			}
		}
		return true
	})
	return lines, nil
}

// isComposition reports whether fd is a group's composition, the one
// place a group names the concrete store: func XOf(st *store.Store) X
// { return X{Area: st.Area, Part: pkg.PartOf(st), ...} }, which hands the
// group the areas it lists, and the compositions of the parts it runs,
// and nothing else.
func isComposition(fd *ast.FuncDecl) bool {
	if fd.Recv != nil || !strings.HasSuffix(fd.Name.Name, "Of") || fd.Body == nil || len(fd.Body.List) != 1 {
		return false
	}
	params := fd.Type.Params.List
	if len(params) != 1 || len(params[0].Names) != 1 {
		return false
	}
	st := params[0].Names[0].Name
	ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return false
	}
	lit, ok := ret.Results[0].(*ast.CompositeLit)
	if !ok {
		return false
	}
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			return false
		}
		if !isArea(kv.Value, st) && !isPartComposition(kv.Value, st) {
			return false
		}
	}
	return true
}

// isArea reports whether e is st.Area.
func isArea(e ast.Expr, st string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == st
}

// isPartComposition reports whether e is another package's composition
// of st: pkg.XOf(st).
func isPartComposition(e ast.Expr, st string) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return false
	}
	fn, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || !strings.HasSuffix(fn.Sel.Name, "Of") {
		return false
	}
	if _, ok := fn.X.(*ast.Ident); !ok {
		return false
	}
	arg, ok := call.Args[0].(*ast.Ident)
	return ok && arg.Name == st
}

package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The tables of docs/design.md that drift with the code, found by their header rows.
const (
	designDoc          = "docs/design.md"
	controllerTableRow = "| controller | workers | starts | its job |"
	packageTableRow    = "| package | what it holds |"
)

// checkDesign holds two tables of docs/design.md to the code: the controller table to the
// controllers pkg/operator runs (names, workers, whether each starts at once), and the package
// map to the packages under pkg/, a row saying "pure" exactly for those hack/pure-packages lists.
func checkDesign(root string) ([]Problem, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(designDoc)))
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(data), "\n")
	var out []Problem
	add := func(line int, format string, a ...any) {
		out = append(out, Problem{File: designDoc, Line: line, Message: fmt.Sprintf(format, a...)})
	}
	wired, err := WiredControllers(filepath.Join(root, "pkg", "operator"))
	if err != nil {
		return nil, err
	}
	header, rows := TableRows(lines, controllerTableRow)
	if header == 0 {
		add(1, "no controller table (a row %q)", controllerTableRow)
	}
	documented := map[string]bool{}
	for _, r := range rows {
		name := strings.Trim(r.Cells[0], "` ")
		documented[name] = true
		c, ok := wired[name]
		if !ok {
			add(r.Line, "controller %s: pkg/operator runs no such controller", name)
			continue
		}
		if len(r.Cells) < 3 {
			add(r.Line, "controller %s: the row has no workers and starts columns", name)
			continue
		}
		if c.Workers > 0 && !strings.HasPrefix(r.Cells[1], strconv.Itoa(c.Workers)) {
			add(r.Line, "controller %s: pkg/operator runs it with %d workers, the table says %q", name, c.Workers, r.Cells[1])
		}
		if saysAtOnce := r.Cells[2] == "at once"; saysAtOnce != c.AtOnce {
			add(r.Line, "controller %s: the table says it starts %q, but pkg/operator starts it %s", name, r.Cells[2], map[bool]string{true: "at once", false: "later"}[c.AtOnce])
		}
	}
	for _, name := range sortedKeys(wired) {
		if !documented[name] && header != 0 {
			add(header, "controller %s: pkg/operator runs it, the controller table lacks it", name)
		}
	}

	pure, err := purePackages(filepath.Join(root, "hack", "pure-packages"))
	if err != nil {
		return nil, err
	}
	packages, err := topPackages(filepath.Join(root, "pkg"))
	if err != nil {
		return nil, err
	}
	header, rows = TableRows(lines, packageTableRow)
	if header == 0 {
		add(1, "no package map (a row %q)", packageTableRow)
	}
	mapped := map[string]bool{}
	for _, r := range rows {
		saysPure := len(r.Cells) > 1 && strings.HasPrefix(r.Cells[1], "pure")
		for _, m := range codeSpan.FindAllStringSubmatch(r.Cells[0], -1) {
			name, ok := strings.CutPrefix(strings.TrimSuffix(m[1], "/*"), "pkg/")
			if !ok || strings.Contains(name, "/") {
				continue
			}
			mapped[name] = true
			switch {
			case !packages[name]:
				add(r.Line, "package map: pkg/%s is not a package", name)
			case saysPure && !pure[name]:
				add(r.Line, "package map: pkg/%s is called pure, but hack/pure-packages does not list it", name)
			case !saysPure && pure[name]:
				add(r.Line, "package map: pkg/%s is in hack/pure-packages, but its row does not begin \"pure\"", name)
			}
		}
	}
	for _, name := range sortedKeys(packages) {
		if !mapped[name] && header != 0 {
			add(header, "package map: pkg/%s has no row", name)
		}
	}
	return out, nil
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// Row is a row of a Markdown table: its line and its cells, trimmed.
type Row struct {
	Line  int
	Cells []string
}

// TableRows returns the line of the table row equal to header (0 when there is none) and the
// rows of its table after the delimiter row.
func TableRows(lines []string, header string) (int, []Row) {
	at := slices.Index(lines, header)
	if at < 0 {
		return 0, nil
	}
	var rows []Row
	for i := at + 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		cells := strings.Split(strings.Trim(strings.TrimSpace(lines[i]), "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		rows = append(rows, Row{Line: i + 1, Cells: cells})
	}
	return at + 1, rows
}

// Controller is how pkg/operator runs a controller of pkg/controller.
type Controller struct {
	Workers int  // 0 when not a constant
	AtOnce  bool // in the first list of controllers, started without waiting for the samples' caches
}

// WiredControllers reads the Go files of dir (pkg/operator) for the lists of controllers it runs:
// composite literals of []runnable, each element {controller, workers}, the controller built by
// New of a pkg/controller package, there or in the function whose result it is. The first list
// in the source starts at once.
func WiredControllers(dir string) (map[string]Controller, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	funcs := map[string]*ast.FuncDecl{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			return nil, err
		}
		parsed = append(parsed, file)
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	out := map[string]Controller{}
	lists := 0
	for _, file := range parsed {
		ast.Inspect(file, func(n ast.Node) bool {
			list, ok := n.(*ast.CompositeLit)
			if !ok || !isRunnableList(list.Type) {
				return true
			}
			lists++
			for _, e := range list.Elts {
				elem, ok := e.(*ast.CompositeLit)
				if !ok || len(elem.Elts) != 2 {
					continue
				}
				name := controllerPackage(file, elem.Elts[0], funcs, parsed)
				if name == "" {
					continue
				}
				c := Controller{AtOnce: lists == 1}
				if lit, ok := elem.Elts[1].(*ast.BasicLit); ok && lit.Kind == token.INT {
					c.Workers, _ = strconv.Atoi(lit.Value)
				}
				out[name] = c
			}
			return false
		})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no []runnable list of controllers found", dir)
	}
	return out, nil
}

func isRunnableList(t ast.Expr) bool {
	a, ok := t.(*ast.ArrayType)
	if !ok {
		return false
	}
	id, ok := a.Elt.(*ast.Ident)
	return ok && id.Name == "runnable"
}

// controllerPackage names the pkg/controller package whose New builds e: a call X.New(...), or a
// variable assigned from a function of the package that makes such a call.
func controllerPackage(file *ast.File, e ast.Expr, funcs map[string]*ast.FuncDecl, files []*ast.File) string {
	switch e := e.(type) {
	case *ast.CallExpr:
		return newOf(file, e)
	case *ast.Ident:
		var name string
		ast.Inspect(file, func(n ast.Node) bool {
			as, ok := n.(*ast.AssignStmt)
			if !ok || name != "" || len(as.Rhs) != 1 {
				return name == ""
			}
			call, ok := as.Rhs[0].(*ast.CallExpr)
			if !ok || !slices.ContainsFunc(as.Lhs, func(l ast.Expr) bool { id, ok := l.(*ast.Ident); return ok && id.Name == e.Name }) {
				return true
			}
			if fn, ok := call.Fun.(*ast.Ident); ok && funcs[fn.Name] != nil {
				decl := funcs[fn.Name]
				home := fileOf(decl, files)
				ast.Inspect(decl, func(n ast.Node) bool {
					if c, ok := n.(*ast.CallExpr); ok && name == "" {
						name = newOf(home, c)
					}
					return name == ""
				})
			}
			return name == ""
		})
		return name
	}
	return ""
}

// newOf names the pkg/controller package of a call X.New(...), "" for any other call.
func newOf(file *ast.File, call *ast.CallExpr) string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "New" {
		return ""
	}
	x, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	for _, imp := range file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		local := path.Base(p)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		if local == x.Name && strings.Contains(p, "/pkg/controller/") {
			return path.Base(p)
		}
	}
	return ""
}

func fileOf(decl *ast.FuncDecl, files []*ast.File) *ast.File {
	for _, f := range files {
		if f.Pos() <= decl.Pos() && decl.End() <= f.End() {
			return f
		}
	}
	return nil
}

// purePackages reads hack/pure-packages: a package name a line, # comments.
func purePackages(file string) (map[string]bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pure := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			pure[line] = true
		}
	}
	return pure, nil
}

// topPackages are the directories right under pkg/ that hold Go files, or packages of their own
// (pkg/controller's).
func topPackages(dir string) (map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if goFiles, _ := filepath.Glob(filepath.Join(dir, e.Name(), "*.go")); len(goFiles) > 0 {
			out[e.Name()] = true
		}
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

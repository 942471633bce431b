package spec

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"
)

// TestExampleDirs checks that every example writes its results into a
// directory of its own: the Go examples' default -dir differs from every
// other Go example's and from the experiment directory of every YAML
// example, so running one never resumes or clashes with another.
func TestExampleDirs(t *testing.T) {
	owner := map[string]string{} // experiment directory -> the example that uses it
	claim := func(dir, example string) {
		dir = filepath.Clean(dir)
		if o, ok := owner[dir]; ok {
			t.Errorf("%s and %s both write into %s", o, example, dir)
			return
		}
		owner[dir] = example
	}
	yamls, err := filepath.Glob("../examples/*.yaml")
	if err != nil || len(yamls) < 2 {
		t.Fatalf("examples: %v %v", yamls, err)
	}
	for _, f := range yamls {
		s, err := Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		claim(filepath.Join(s.Storage, s.Name), f)
	}
	mains, err := filepath.Glob("../examples/*/main.go")
	if err != nil || len(mains) < 2 {
		t.Fatalf("Go examples: %v %v", mains, err)
	}
	for _, f := range mains {
		dir, ok := dirFlagDefault(t, f)
		if !ok {
			t.Errorf("%s: no -dir flag with a default of filepath.Join(\"hone_results\", NAME)", f)
			continue
		}
		claim(dir, f)
	}
}

// dirFlagDefault returns the default of the -dir flag a Go example's
// main.go defines, written as filepath.Join of string literals.
func dirFlagDefault(t *testing.T, path string) (string, bool) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	var dir string
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || (sel.Sel.Name != "String" && sel.Sel.Name != "StringVar") {
			return true
		}
		args := call.Args
		if sel.Sel.Name == "StringVar" && len(args) > 0 {
			args = args[1:]
		}
		if len(args) < 2 || literal(args[0]) != "dir" {
			return true
		}
		join, ok := args[1].(*ast.CallExpr)
		if !ok {
			return true
		}
		var parts []string
		for _, a := range join.Args {
			s := literal(a)
			if s == "" {
				return true
			}
			parts = append(parts, s)
		}
		dir, found = filepath.Join(parts...), len(parts) > 0
		return false
	})
	return dir, found
}

// literal returns the value of a string literal, or "".
func literal(e ast.Expr) string {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}

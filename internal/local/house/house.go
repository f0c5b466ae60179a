// Package house measures the module's shape: the exported names of each
// public package, the functions longer than a limit, and the files longer
// than a limit, in non-test Go files. docs/contributing.md gives the
// command that prints them (go test -v -run TestShape
// ./internal/local/house) and the limits the tests hold.
package house

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Func is one function or method and its length in lines.
type Func struct {
	Pos   string // file:line, relative to the module root
	Name  string // Name, or Recv.Name for a method
	Lines int
}

// File is one non-test Go file and its length in lines.
type File struct {
	Path  string
	Lines int
}

// Package is what one package directory holds.
type Package struct {
	Dir      string   // relative to the module root, "." for the root
	Public   bool     // not under internal/, cmd/ or functions/
	Exported []string // exported top-level names
	Methods  []string // exported methods of exported types, Type.Method
	Funcs    []Func
	Files    []File
}

// Module is every package of the module rooted at Root (nested modules,
// testdata and hidden directories left out).
type Module struct {
	Root     string
	Packages []Package
}

// Read parses every non-test Go file under root.
func Read(root string) (Module, error) {
	m := Module{Root: root}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != root && skipDir(path, d.Name()) {
			return filepath.SkipDir
		}
		p, ok, err := readDir(root, path)
		if ok {
			m.Packages = append(m.Packages, p)
		}
		return err
	})
	return m, err
}

// skipDir says whether a directory holds no package of this module.
func skipDir(path, name string) bool {
	if name == "testdata" || name == "node_modules" || name == "bin" || strings.HasPrefix(name, ".") {
		return true
	}
	_, err := os.Stat(filepath.Join(path, "go.mod"))
	return err == nil // another module
}

// readDir reads the package in dir, if it has non-test Go files.
func readDir(root, dir string) (Package, bool, error) {
	rel, _ := filepath.Rel(root, dir)
	rel = filepath.ToSlash(rel)
	p := Package{Dir: rel, Public: public(rel)}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return p, false, err
	}
	fset := token.NewFileSet()
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return p, false, err
		}
		path := filepath.ToSlash(filepath.Join(rel, filepath.Base(name)))
		p.Files = append(p.Files, File{Path: path, Lines: fset.File(f.Pos()).LineCount()})
		p.add(fset, f, path)
	}
	sort.Strings(p.Exported)
	sort.Strings(p.Methods)
	return p, len(p.Files) > 0, nil
}

// public says whether the package in dir is one another module may import.
func public(dir string) bool {
	first, _, _ := strings.Cut(dir, "/")
	return first != "internal" && first != "cmd" && first != "functions"
}

// add records f's declarations.
func (p *Package) add(fset *token.FileSet, f *ast.File, path string) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			p.addFunc(fset, d, path)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					p.export(s.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						p.export(n)
					}
				}
			}
		}
	}
}

func (p *Package) export(n *ast.Ident) {
	if n.IsExported() {
		p.Exported = append(p.Exported, n.Name)
	}
}

func (p *Package) addFunc(fset *token.FileSet, d *ast.FuncDecl, path string) {
	start, end := fset.Position(d.Pos()), fset.Position(d.End())
	name := d.Name.Name
	if d.Recv != nil && len(d.Recv.List) > 0 {
		recv := receiver(d.Recv.List[0].Type)
		if ast.IsExported(recv) && d.Name.IsExported() {
			p.Methods = append(p.Methods, recv+"."+name)
		}
		name = recv + "." + name
	} else if d.Name.IsExported() {
		p.Exported = append(p.Exported, name)
	}
	p.Funcs = append(p.Funcs, Func{Pos: fmt.Sprintf("%s:%d", path, start.Line), Name: name, Lines: end.Line - start.Line + 1})
}

// receiver returns the type name of a method's receiver.
func receiver(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// Public returns the public packages.
func (m Module) Public() []Package {
	var out []Package
	for _, p := range m.Packages {
		if p.Public {
			out = append(out, p)
		}
	}
	return out
}

// FuncsOver returns the functions longer than n lines in the packages
// whose directory starts with one of prefixes (all, when none is given),
// longest first.
func (m Module) FuncsOver(n int, prefixes ...string) []Func {
	var out []Func
	for _, p := range m.Packages {
		if !under(p.Dir, prefixes) {
			continue
		}
		for _, f := range p.Funcs {
			if f.Lines > n {
				out = append(out, f)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lines > out[j].Lines })
	return out
}

// FilesOver returns the non-test files longer than n lines, longest first.
func (m Module) FilesOver(n int) []File {
	var out []File
	for _, p := range m.Packages {
		for _, f := range p.Files {
			if f.Lines > n {
				out = append(out, f)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lines > out[j].Lines })
	return out
}

// under says whether dir is one of prefixes or below one; no prefixes
// means every directory.
func under(dir string, prefixes []string) bool {
	if len(prefixes) == 0 {
		return true
	}
	for _, p := range prefixes {
		if dir == p || strings.HasPrefix(dir, p+"/") {
			return true
		}
	}
	return false
}

package house

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestShape prints the module's shape (go test -v -run TestShape
// ./internal/local/house) and holds it to the limits docs/contributing.md
// states.
func TestShape(t *testing.T) {
	m, err := Read(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	names, methods := 0, 0
	for _, p := range m.Public() {
		names += len(p.Exported)
		methods += len(p.Methods)
		t.Logf("%-28s %3d exported names, %3d methods", p.Dir, len(p.Exported), len(p.Methods))
	}
	t.Logf("%d public packages, %d exported top-level names (%d with methods)", len(m.Public()), names, names+methods)
	for _, l := range limits {
		over := slices.DeleteFunc(m.FuncsOver(l.lines, l.dirs...), func(f Func) bool { return len(l.skip) > 0 && under(filepath.Dir(f.Pos), l.skip) })
		t.Logf("functions over %d lines in %s: %d", l.lines, l.where(), len(over))
		for _, f := range over {
			t.Logf("  %4d %s %s", f.Lines, f.Pos, f.Name)
		}
		if len(over) > l.most {
			t.Errorf("%d functions over %d lines in %s; at most %d", len(over), l.lines, l.where(), l.most)
		}
	}
	files := m.FilesOver(500)
	t.Logf("non-test files over 500 lines: %d", len(files))
	for _, f := range files {
		t.Logf("  %4d %s", f.Lines, f.Path)
	}
	if len(files) > mostFilesOver500 {
		t.Errorf("%d non-test files over 500 lines; at most %d", len(files), mostFilesOver500)
	}
}

// limits are the function lengths the module holds to: none over 100
// lines; none over 60 in the CLI and the tools (what runs only locally
// and in tests); at most 15 over 60 in all.
var limits = []limit{
	{lines: 100, most: 0},
	{lines: 60, dirs: []string{"cli", "cmd", "internal/local", "internal/inbox/inboxtest"}, most: 0},
	{lines: 60, most: 15},
	// The handlers' steps are small, each testable alone; the inbox's
	// conformance suite is test code.
	{lines: 45, dirs: []string{"internal/receiver", "internal/intake", "internal/processor", "internal/inbox", "internal/destination", "internal/privacy"},
		skip: []string{"internal/inbox/inboxtest"}, most: 0},
}

// mostFilesOver500 is how many non-test files may be longer than 500
// lines.
const mostFilesOver500 = 3

// limit is at most most functions over lines lines in dirs (all, when
// none is given) but skip.
type limit struct {
	lines int
	dirs  []string
	skip  []string
	most  int
}

func (l limit) where() string {
	if len(l.dirs) == 0 {
		return "the module"
	}
	return strings.Join(l.dirs, ", ")
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

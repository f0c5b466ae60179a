package doclinks

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The docs are read by people: these are their budgets in lines.
const (
	maxDocsLines   = 2400 // all of docs/*.md
	maxPageLines   = 450  // any one page of docs/
	maxReadmeLines = 300
)

// TestDocsWithinBudget fails when docs/ or README.md outgrows its budget:
// cut repetition or link to the page that says it, rather than raise it.
func TestDocsWithinBudget(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, p := range pages {
		n := lines(t, p)
		total += n
		if n > maxPageLines {
			t.Errorf("docs/%s has %d lines, more than %d", filepath.Base(p), n, maxPageLines)
		}
	}
	if total > maxDocsLines {
		t.Errorf("docs/ has %d lines, more than %d", total, maxDocsLines)
	}
	if n := lines(t, filepath.Join(root, "README.md")); n > maxReadmeLines {
		t.Errorf("README.md has %d lines, more than %d", n, maxReadmeLines)
	}
}

// runbookRef is an alarm description's pointer to its runbook section:
// docs/operations.md, "The DLQ alarm fired".
var runbookRef = regexp.MustCompile(`docs/operations\.md,? "([^"]+)"`)

// TestTemplateRunbookSectionsExist: every section of docs/operations.md
// that template.yaml names (in an alarm's description) is a heading there.
func TestTemplateRunbookSectionsExist(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	tpl, err := os.ReadFile(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := headingAnchors(string(ops))
	refs := runbookRef.FindAllStringSubmatch(strings.Join(strings.Fields(string(tpl)), " "), -1)
	if len(refs) == 0 {
		t.Fatal("template.yaml names no section of docs/operations.md")
	}
	for _, m := range refs {
		if !anchors[slug(m[1])] {
			t.Errorf("template.yaml names %q, which is no heading of docs/operations.md", m[1])
		}
	}
}

func lines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(fmt.Errorf("read %s: %w", path, err))
	}
	return bytes.Count(b, []byte("\n"))
}

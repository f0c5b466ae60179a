package doclinks

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// The docs are read by people: these are their budgets in lines.
const (
	maxDocsLines   = 2600 // all of docs/*.md
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

// TestEveryAlarmHasARunbookSection: each alarm of template.yaml names, in
// its description, a section of docs/operations.md that is a heading there,
// and the page's alarm table lists it.
func TestEveryAlarmHasARunbookSection(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	tpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := headingAnchors(string(ops))
	alarms := tpl.ByType("AWS::CloudWatch::Alarm")
	if len(alarms) == 0 {
		t.Fatal("template.yaml has no alarm")
	}
	for _, id := range alarms {
		d, err := samtemplate.ScalarString(tpl.Resources[id].Properties["AlarmDescription"])
		if err != nil {
			t.Errorf("%s's AlarmDescription: %v", id, err)
			continue
		}
		m := runbookRef.FindStringSubmatch(strings.Join(strings.Fields(d), " "))
		switch {
		case m == nil:
			t.Errorf("%s's description names no section of docs/operations.md (See docs/operations.md, \"...\")", id)
		case !anchors[slug(m[1])]:
			t.Errorf("%s names %q, which is no heading of docs/operations.md", id, m[1])
		}
		if !bytes.Contains(ops, []byte("| `"+id+"` |")) {
			t.Errorf("docs/operations.md's alarm table has no row for %s", id)
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

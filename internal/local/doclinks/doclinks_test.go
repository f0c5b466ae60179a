package doclinks

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestRelativeLinksResolve checks every Markdown file of the repository.
func TestRelativeLinksResolve(t *testing.T) {
	broken, err := check(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// TestCheckFindsBrokenLinks: a missing file, a missing anchor and an
// anchor on a page that lacks it are reported; links that resolve, links
// inside code and links to other sites are not.
func TestCheckFindsBrokenLinks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "# Intro\n\n## The `hookinbox` CLI — commands\n\n## Setup\n\n## Setup\n\n"+
		"[ok](#the-hookinbox-cli--commands) [ok](#setup-1) [ok](docs/a.md#first-deploy) [ok](docs/) [ok](https://example.com/x.md#y)\n"+
		"`[in code](missing.md)`\n```\n[in a block](missing.md)\n```\n"+
		"[bad](docs/gone.md) [bad](#nowhere) [bad](docs/a.md#second)\n")
	write("docs/a.md", "# First deploy\n\n[ok](../README.md#intro)\n")

	broken, err := check(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"README.md: docs/gone.md: no such file",
		"README.md: #nowhere: no such heading",
		"README.md: docs/a.md#second: no such heading",
	}
	slices.Sort(want)
	slices.Sort(broken)
	if !slices.Equal(broken, want) {
		t.Errorf("check reported\n%s\nwant\n%s", strings.Join(broken, "\n"), strings.Join(want, "\n"))
	}
}

var (
	fence      = regexp.MustCompile("(?ms)^```.*?^```")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	link       = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	heading    = regexp.MustCompile(`(?m)^#{1,6}[ \t]+(.+?)[ \t#]*$`)
	htmlAnchor = regexp.MustCompile(`<a (?:name|id)="([^"]+)"`)
	scheme     = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// check returns one line per broken relative link in the Markdown files
// under root.
func check(root string) ([]string, error) {
	var pages []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin", ".aws-sam":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) (map[string]bool, error) {
		if a, ok := anchors[page]; ok {
			return a, nil
		}
		text, err := os.ReadFile(page)
		if err != nil {
			return nil, err
		}
		a := headingAnchors(string(text))
		anchors[page] = a
		return a, nil
	}
	var broken []string
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			return nil, err
		}
		text := codeSpan.ReplaceAllString(fence.ReplaceAllString(string(raw), ""), "")
		rel, _ := filepath.Rel(root, page)
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if scheme.MatchString(target) {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := page
			if path != "" {
				dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					broken = append(broken, fmt.Sprintf("%s: %s: no such file", rel, target))
					continue
				}
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(dest, ".md") {
				broken = append(broken, fmt.Sprintf("%s: %s: an anchor on a file that is not Markdown", rel, target))
				continue
			}
			a, err := anchorsOf(dest)
			if err != nil {
				return nil, err
			}
			if !a[frag] {
				broken = append(broken, fmt.Sprintf("%s: %s: no such heading", rel, target))
			}
		}
	}
	return broken, nil
}

// headingAnchors returns the anchors GitHub gives the headings of a page
// (outside code blocks), and those of its <a id="..."> tags.
func headingAnchors(text string) map[string]bool {
	text = fence.ReplaceAllString(text, "")
	a := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(text, -1) {
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			a[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			a[s] = true
		}
		seen[s]++
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
		a[m[1]] = true
	}
	return a
}

var linkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

// slug is GitHub's anchor of a heading: its text in lower case, without
// punctuation or symbols other than '-' and '_', spaces made '-'.
func slug(h string) string {
	h = linkText.ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

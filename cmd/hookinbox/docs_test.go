package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hookinbox/hookinbox/cli"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
)

// docCommand is one command line of the CLI written in a page.
type docCommand struct {
	where  string   // page:line
	prefix string   // "go tool hookinbox", "hookinbox", "go run ./cmd/hookinbox", "bin/hookinbox"
	args   []string // after the prefix, unquoted
	out    string   // the file after an unquoted >, if any
}

// prefixes are the ways the pages run the CLI: in a team's module (go
// tool, or an installed hookinbox) and in hookinbox's checkout.
var prefixes = [][]string{
	{"go", "tool", "hookinbox"},
	{"hookinbox"},
	{"go", "run", "./cmd/hookinbox"},
	{"bin/hookinbox"},
}

// inTeamModule reports whether a command with this prefix runs in a
// team's module (its files are the team's), not in hookinbox's checkout.
func inTeamModule(prefix string) bool {
	return prefix == "go tool hookinbox" || prefix == "hookinbox"
}

// shellWords splits a command line as sh splits a simple command: quotes,
// backslashes, a comment from an unquoted # that starts a word. It stops
// at an unquoted |, & or ; and returns the word after an unquoted > as out.
func shellWords(line string) (words []string, out string) {
	var (
		word    strings.Builder
		inWord  bool
		quote   rune
		escaped bool
		toOut   bool
	)
	flush := func() {
		if !inWord {
			return
		}
		if toOut {
			out, toOut = word.String(), false
		} else {
			words = append(words, word.String())
		}
		word.Reset()
		inWord = false
	}
	for _, r := range line {
		switch {
		case escaped:
			word.WriteRune(r)
			escaped = false
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				word.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			flush()
		case r == '#' && !inWord:
			flush()
			return words, out
		case r == '|' || r == '&' || r == ';':
			flush()
			return words, out
		case r == '>':
			flush()
			toOut = true
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	flush()
	return words, out
}

// pageCommands returns the CLI's command lines in a Markdown page: lines
// of its code blocks (a trailing backslash joins the next line) and inline
// code spans that start with one of prefixes.
func pageCommands(name string, page []byte) []docCommand {
	var (
		cmds    []docCommand
		inBlock bool
		joined  string
	)
	span := regexp.MustCompile("`([^`]+)`")
	add := func(n int, text string) {
		words, out := shellWords(text)
		for _, p := range prefixes {
			if len(words) > len(p) && slices.Equal(words[:len(p)], p) {
				cmds = append(cmds, docCommand{where: fmt.Sprintf("%s:%d", name, n), prefix: strings.Join(p, " "), args: words[len(p):], out: out})
				return
			}
		}
	}
	for i, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			for _, m := range span.FindAllStringSubmatch(line, -1) {
				add(i+1, m[1])
			}
			continue
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			joined += cont + " "
			continue
		}
		add(i+1, joined+line)
		joined = ""
	}
	return cmds
}

func TestShellWords(t *testing.T) {
	tests := []struct {
		line    string
		want    []string
		wantOut string
	}{
		{`go tool hookinbox inspect 'stripe#evt_...'    # the event`, []string{"go", "tool", "hookinbox", "inspect", "stripe#evt_..."}, ""},
		{`hookinbox replay --key stripe#evt_123 --key evt_456`, []string{"hookinbox", "replay", "--key", "stripe#evt_123", "--key", "evt_456"}, ""},
		{`go tool hookinbox chaos --generate 100 > events.jsonl      # or yours`, []string{"go", "tool", "hookinbox", "chaos", "--generate", "100"}, "events.jsonl"},
		{`aws lambda invoke --payload '{"all": true}' out.json && cat out.json`, []string{"aws", "lambda", "invoke", "--payload", `{"all": true}`, "out.json"}, ""},
		{`X="a b" c\ d`, []string{"X=a b", "c d"}, ""},
	}
	for _, tt := range tests {
		got, gotOut := shellWords(tt.line)
		if diff := cmp.Diff(tt.want, got); diff != "" || gotOut != tt.wantOut {
			t.Errorf("shellWords(%q): out %q, want %q; words (-want +got):\n%s", tt.line, gotOut, tt.wantOut, diff)
		}
	}
}

// TestDocsCommandLinesParse checks every command line of the CLI in the
// README and docs/: its command exists and the CLI's own flag sets take
// its flags (the line run with --help appended parses every flag before
// it and stops). A file it reads exists where the command runs: in a
// team's module (examples/custom-business, laid out as docs/adopting.md
// says) for go tool hookinbox and hookinbox, in hookinbox's checkout for
// go run ./cmd/hookinbox and bin/hookinbox; or an earlier command of the
// pages writes it (-o, >), or the page's prose names it (`destinations.yaml`)
// for the reader to write. A file:// URL in a code block of the pages a
// team follows names a file of the team's module.
func TestDocsCommandLinesParse(t *testing.T) {
	root := repoRoot(t)
	team := filepath.Join(root, "examples", "custom-business")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	written := map[string]bool{}
	var cmds []docCommand
	for _, path := range pages {
		page, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		// A file the page's prose names is one it tells the reader to write.
		for _, m := range regexp.MustCompile("`([^`\\s]+)`").FindAllStringSubmatch(prose(page), -1) {
			written[m[1]] = true
		}
		for _, c := range pageCommands(rel, page) {
			cmds = append(cmds, c)
			if c.out != "" {
				written[c.out] = true
			}
			if i := slices.Index(c.args, "-o"); i >= 0 && i+1 < len(c.args) {
				written[c.args[i+1]] = true
			}
		}
		if rel == filepath.Join("docs", "adopting.md") || rel == filepath.Join("docs", "deploy.md") || rel == filepath.Join("docs", "operations.md") {
			for _, m := range regexp.MustCompile(`file://([^\s'"]+)`).FindAllStringSubmatch(codeBlocks(page), -1) {
				if !filepath.IsAbs(m[1]) && !exists(filepath.Join(team, m[1])) {
					t.Errorf("%s: file://%s: no such file in a team's module", rel, m[1])
				}
			}
		}
	}
	if len(cmds) < 30 {
		t.Fatalf("found %d command lines in the pages, want the pages' many: is the extraction broken?", len(cmds))
	}
	for _, c := range cmds {
		name := c.args[0]
		if strings.HasPrefix(name, "<") || name == "..." {
			continue // any command: `hookinbox <command> --help`
		}
		if !slices.Contains(commandNames(t), name) {
			t.Errorf("%s: %s %s: no command %q", c.where, c.prefix, strings.Join(c.args, " "), name)
			continue
		}
		// A line that ends with a flag names the flag (`hookinbox dev
		// --template`): the command's usage lists it.
		args, mention := c.args, ""
		if last := args[len(args)-1]; len(args) > 1 && strings.HasPrefix(last, "-") && !strings.Contains(last, "=") && last != "--help" {
			args, mention = args[:len(args)-1], strings.TrimLeft(last, "-")
		}
		if name != "help" {
			args = append(slices.Clone(args), "--help")
		}
		var stdout, stderr bytes.Buffer
		if code := cli.Run(context.Background(), options(), args, &stdout, &stderr); code != 0 {
			t.Errorf("%s: %s %s: exit %d, the CLI does not take it:\n%s", c.where, c.prefix, strings.Join(c.args, " "), code, &stderr)
		}
		if mention != "" && !strings.Contains(stdout.String(), "  -"+mention+" ") && !strings.Contains(stdout.String(), "  -"+mention+"\n") {
			t.Errorf("%s: %s %s: %s has no flag -%s", c.where, c.prefix, strings.Join(c.args, " "), name, mention)
		}
		dir := root
		if inTeamModule(c.prefix) {
			dir = team
		}
		for i, a := range c.args {
			if i > 0 && (c.args[i-1] == "-o" || c.args[i-1] == "--state-file") || !readsFile(a) || written[a] {
				continue
			}
			if !exists(filepath.Join(dir, a)) {
				t.Errorf("%s: %s %s: %s is not in %s", c.where, c.prefix, strings.Join(c.args, " "), a, dir)
			}
		}
	}
}

// readsFile reports whether a word of a command line names a file to
// read: a relative path with a data file's extension, no placeholder.
func readsFile(word string) bool {
	if strings.HasPrefix(word, "-") || strings.Contains(word, "://") || strings.ContainsAny(word, "<>…") || strings.Contains(word, "...") {
		return false
	}
	switch filepath.Ext(word) {
	case ".json", ".jsonl", ".yaml", ".yml", ".toml":
		return true
	}
	return false
}

// codeBlocks returns the lines of page's fenced code blocks.
func codeBlocks(page []byte) string { return pageLines(page, true) }

// prose returns the lines of page outside its fenced code blocks.
func prose(page []byte) string { return pageLines(page, false) }

// pageLines returns the lines of page inside (or outside) its fenced code
// blocks.
func pageLines(page []byte, inside bool) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if in == inside {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestReadmeListsEveryCommand: the README's command table has one row
// for each command `hookinbox --help` lists (help aside), and no row for
// a command that does not exist.
func TestReadmeListsEveryCommand(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "\n## The hookinbox CLI\n")
	if !ok {
		t.Fatal(`README.md has no section "## The hookinbox CLI"`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z]+)[^`]*` \\|").FindAllStringSubmatch(table, -1) {
		listed = append(listed, m[1])
	}
	want := slices.DeleteFunc(commandNames(t), func(name string) bool { return name == "help" })
	slices.Sort(listed)
	slices.Sort(want)
	if diff := cmp.Diff(want, listed); diff != "" {
		t.Errorf("README.md's command table (-hookinbox --help +README):\n%s", diff)
	}
}

// commandNames returns the commands `hookinbox help` lists.
func commandNames(t *testing.T) []string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Run(context.Background(), options(), []string{"help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("hookinbox help: exit %d\n%s", code, &stderr)
	}
	_, list, _ := strings.Cut(stdout.String(), "Commands:\n")
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		names = append(names, strings.Fields(line)[0])
	}
	return names
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := devstack.RepoRoot("")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

package console

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static/console.css static/console.js
var staticFiles embed.FS

// page is what the layout shows around a page's Body.
type page struct {
	Title string
	Nav   string // the navigation entry of the page: "events", "parked", ...
	// Refresh, when set, is how often in seconds the page's live part
	// (id "live") is read again while it is open.
	Refresh int
	Error   string
	Body    any

	// Set by render.
	Where, CSRF, StackArgs string
	ReadOnly               bool
	At                     time.Time
}

// pages are the parsed templates, one set per page with the layout.
type pages map[string]*template.Template

func parsePages() (pages, error) {
	names, err := templateFiles.ReadDir("templates")
	if err != nil {
		return nil, err
	}
	out := pages{}
	for _, n := range names {
		name := strings.TrimSuffix(n.Name(), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New(name).Funcs(templateFuncs()).ParseFS(templateFiles, "templates/layout.html", "templates/"+n.Name())
		if err != nil {
			return nil, fmt.Errorf("console template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// templateFuncs are the templates' helpers: formatting only.
func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"when":       when,
		"lastActive": inbox.LastActive,
		"status":     func(s inbox.Status) string { return strings.ToLower(string(s)) },
		"quote":      shellQuote,
		"short":      shorten,
	}
}

// when formats t for a person, in the machine's time zone.
func when(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

// render writes the page name with the layout; an error rendering it is
// the console's bug, answered 500.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.Where, p.CSRF, p.StackArgs, p.ReadOnly, p.At = s.cfg.Where, s.csrf, s.cfg.StackArgs, s.cfg.ReadOnly, s.now()
	var b bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&b, "layout", p); err != nil {
		s.logf("render %s: %v", name, err)
		http.Error(w, "hookinbox console: this page could not be shown (see the console's output)", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b.Bytes())
	}
}

// fail shows a page that says what went wrong.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.render(w, r, status, "error", page{Title: http.StatusText(status), Error: msg})
}

// logf writes one line to the console's log.
func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.cfg.Log, "hookinbox console: "+format+"\n", args...)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shorten cuts s to n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/console"
)

func TestNewServesLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:4400", "192.168.1.2:4400", "example.com:4400", "127.0.0.1", "[::]:4400", "127.0.0.1:0"} {
		if _, err := console.New(console.Config{Addr: addr}, newFake()); err == nil {
			t.Errorf("New(%q) = nil error, want a refusal", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:4400", "[::1]:4400", "127.0.0.2:1"} {
		if _, err := console.New(console.Config{Addr: addr}, newFake()); err != nil {
			t.Errorf("New(%q): %v", addr, err)
		}
	}
}

// TestGuardTurnsAwayWhoDidNotOpenTheURL checks who gets an answer: the
// browser that opened the printed URL, on the address the console
// listens on; not another local user or web page without the cookie, a
// DNS-rebound host, or a form posted from another origin or without its
// CSRF token.
func TestGuardTurnsAwayWhoDidNotOpenTheURL(t *testing.T) {
	st := newFake()
	c := newClient(t, st, false)
	for _, tt := range append(guardCases(c), postCases(c)...) {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			c.srv.ServeHTTP(w, tt.req())
			if w.Code != tt.want || !strings.Contains(w.Body.String(), tt.wantS) {
				t.Errorf("answered %d, want %d with %q:\n%s", w.Code, tt.want, tt.wantS, w.Body)
			}
			checkHeaders(t, w)
		})
	}
	if len(st.erases) != 0 || len(st.replays) != 0 {
		t.Errorf("the stack was asked to change: %v %v", st.erases, st.replays)
	}
}

// guardCase is a request and the answer the guard gives it.
type guardCase struct {
	name  string
	req   func() *http.Request
	want  int
	wantS string // in the answer
}

// guardCases are requests of the browser signed in as c, and of others.
func guardCases(c *client) []guardCase {
	return []guardCase{
		{"no cookie", func() *http.Request { return request("GET", "/events", nil) }, http.StatusForbidden, "open the URL"},
		{"wrong token in the URL", func() *http.Request { return request("GET", "/?token=guess", nil) }, http.StatusForbidden, "wrong token"},
		{"a page of another site, cookie and all", func() *http.Request {
			r := c.withCookie(request("GET", "/events", nil))
			r.Header.Set("Sec-Fetch-Site", "cross-site")
			return r
		}, http.StatusForbidden, "another site"},
		{"wrong cookie", func() *http.Request {
			r := request("GET", "/events", nil)
			r.AddCookie(&http.Cookie{Name: c.cookie.Name, Value: "guess"})
			return r
		}, http.StatusForbidden, "open the URL"},
		{"foreign Host (DNS rebinding)", func() *http.Request {
			r := c.withCookie(request("GET", "/events", nil))
			r.Host = "attacker.example:4400"
			return r
		}, http.StatusMisdirectedRequest, "answers only to 127.0.0.1:4400"},
		{"localhost", func() *http.Request {
			r := c.withCookie(request("GET", "/events", nil))
			r.Host = "localhost:4400"
			return r
		}, http.StatusOK, "Events"},
	}
}

// TestTheURLsTokenBecomesACookie checks the sign-in: the token leaves the
// address for an HttpOnly, SameSite=Strict cookie of this port.
func TestTheURLsTokenBecomesACookie(t *testing.T) {
	srv, err := console.New(console.Config{Addr: testAddr, Token: "t0ken"}, newFake())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := srv.URL(), "http://127.0.0.1:4400/?token=t0ken"; got != want {
		t.Errorf("URL() = %q, want %q", got, want)
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, request("GET", "/event?key=stripe%23evt_1&token=t0ken", nil))
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || loc != "/event?key=stripe%23evt_1" {
		t.Errorf("answered %d to %q, want 303 to the page without the token", w.Code, loc)
	}
	ck := w.Result().Cookies()
	if len(ck) != 1 || ck[0].Name != "hookinbox_console_4400" || ck[0].Value != "t0ken" || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != "/" {
		t.Errorf("cookies %+v, want one HttpOnly SameSite=Strict cookie of port 4400", ck)
	}
}

// TestSignInRedirectsOnlyHere checks that the sign-in's redirect stays
// on the console, whatever path the URL names.
func TestSignInRedirectsOnlyHere(t *testing.T) {
	srv, err := console.New(console.Config{Addr: testAddr, Token: "t0ken"}, newFake())
	if err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{"//attacker.example/?token=t0ken", "/%2F%2Fattacker.example?token=t0ken"} {
		w := httptest.NewRecorder()
		r := request("GET", "/", nil)
		r.URL, _ = url.Parse(target)
		srv.ServeHTTP(w, r)
		if loc := w.Header().Get("Location"); strings.Contains(loc, "attacker") || !strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") {
			t.Errorf("%s redirected to %q", target, loc)
		}
	}
}

func (c *client) withCookie(r *http.Request) *http.Request {
	r.AddCookie(c.cookie)
	return r
}

// checkHeaders checks what every answer carries: no framing
// (clickjacking), no Referer (the token), no caching, no sniffing, and
// scripts from the console only.
func checkHeaders(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	for k, want := range map[string]string{
		"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store",
	} {
		if got := w.Header().Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	csp := w.Header().Get("Content-Security-Policy")
	for _, want := range []string{"frame-ancestors 'none'", "script-src 'self'", "default-src 'none'", "form-action 'self'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("answer opens itself to other origins: %v", w.Header())
	}
}

// postCases are forms posted by the browser signed in as c, and by
// pages that would drive it.
func postCases(c *client) []guardCase {
	form := func(csrf string) url.Values {
		return url.Values{"csrf": {csrf}, "subject": {"jane@example.com"}}
	}
	return []guardCase{
		{"POST without CSRF token", func() *http.Request {
			return c.withCookie(request("POST", "/personal/export", url.Values{"subject": {"jane@example.com"}}))
		}, http.StatusForbidden, "CSRF"},
		{"POST with a wrong CSRF token", func() *http.Request {
			return c.withCookie(request("POST", "/personal/export", form(strings.Repeat("0", len(c.csrf)))))
		}, http.StatusForbidden, "CSRF"},
		{"POST from a page of another origin", func() *http.Request {
			r := c.withCookie(request("POST", "/personal/export", form(c.csrf)))
			r.Header.Set("Origin", "https://attacker.example")
			return r
		}, http.StatusForbidden, "attacker.example"},
		{"POST from another port of this machine", func() *http.Request {
			r := c.withCookie(request("POST", "/personal/export", form(c.csrf)))
			r.Header.Set("Origin", "http://127.0.0.1:8080")
			return r
		}, http.StatusForbidden, "may not change"},
		{"POST from another site (no Origin)", func() *http.Request {
			r := c.withCookie(request("POST", "/personal/export", form(c.csrf)))
			r.Header.Del("Origin")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
			return r
		}, http.StatusForbidden, "another site"},
		{"POST from a sandboxed frame of a browser without Sec-Fetch-Site (Origin null)", func() *http.Request {
			r := c.withCookie(request("POST", "/personal/export", form(c.csrf)))
			r.Header.Set("Origin", "null")
			r.Header.Del("Sec-Fetch-Site")
			return r
		}, http.StatusForbidden, "opaque origin"},
		{"POST as the console's own form under no-referrer (Origin null)", func() *http.Request {
			r := c.withCookie(request("POST", "/personal/export", form(c.csrf)))
			r.Header.Set("Origin", "null")
			return r
		}, http.StatusOK, "stripe#evt_pii"},
		{"POST as the console's own form", func() *http.Request {
			return c.withCookie(request("POST", "/personal/export", form(c.csrf)))
		}, http.StatusOK, "stripe#evt_pii"},
	}
}

package console_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

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
// listens on; not another local user or web page without the token or
// the cookie, a DNS-rebound host, or a form posted from another origin
// or without its CSRF token.
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
// Another local user's listener on another port of 127.0.0.1 gets the
// cookie, name and value, as browsers send cookies to every port of a
// host: that cookie opens nothing without the token.
func guardCases(c *client) []guardCase {
	get := func(path string, cookie *http.Cookie) func() *http.Request {
		return func() *http.Request {
			r := request("GET", path, nil)
			if cookie != nil {
				r.AddCookie(cookie)
			}
			return r
		}
	}
	site := func(value string) func() *http.Request {
		return func() *http.Request {
			r := get(c.at("/events"), c.cookie)()
			r.Header.Set("Sec-Fetch-Site", value)
			return r
		}
	}
	wrong := &http.Cookie{Name: c.cookie.Name, Value: "guess"}
	token := c.base[1:]
	return []guardCase{
		{"nothing", get("/events", nil), http.StatusForbidden, "open the URL hookinbox console printed"},
		{"the cookie without the token", get("/events", c.cookie), http.StatusForbidden, "open the URL hookinbox console printed"},
		{"the cookie at the root", get("/", c.cookie), http.StatusForbidden, "open the URL hookinbox console printed"},
		{"the cookie and a guessed token", get("/guess/events", c.cookie), http.StatusForbidden, "open the URL hookinbox console printed"},
		{"the cookie and the token as a query", get("/events?token="+token, c.cookie), http.StatusForbidden, "open the URL hookinbox console printed"},
		{"the cookie and the token further down the path", get("/x/"+token+"/events", c.cookie), http.StatusForbidden, "open the URL hookinbox console printed"},
		{"the token without the cookie", get(c.at("/events"), nil), http.StatusForbidden, "has not opened the URL"},
		{"the token with a wrong cookie", get(c.at("/events"), wrong), http.StatusForbidden, "has not opened the URL"},
		{"the token with the token as the cookie", get(c.at("/events"), &http.Cookie{Name: c.cookie.Name, Value: token}), http.StatusForbidden, "has not opened the URL"},
		{"a page of another site, token, cookie and all", site("cross-site"), http.StatusForbidden, "another site or port"},
		{"a page on another port of this machine, token, cookie and all", site("same-site"), http.StatusForbidden, "another site or port"},
		{"foreign Host (DNS rebinding)", func() *http.Request {
			r := get(c.at("/events"), c.cookie)()
			r.Host = "attacker.example:4400"
			return r
		}, http.StatusMisdirectedRequest, "answers only to 127.0.0.1:4400"},
		{"localhost", func() *http.Request {
			r := get(c.at("/events"), c.cookie)()
			r.Host = "localhost:4400"
			return r
		}, http.StatusOK, "Events"},
		{"typed in the address bar", site("none"), http.StatusOK, "Events"},
		{"the icon a browser asks of every origin", get("/favicon.ico", nil), http.StatusNoContent, ""},
		{"a link of the console's own pages", site("same-origin"), http.StatusOK, "Events"},
	}
}

// TestOpeningTheURLSignsIn checks the sign-in: the printed URL, and only
// it, gives the browser an HttpOnly, SameSite=Strict cookie that is sent
// only below the token's path and does not hold the token, and shows the
// events.
func TestOpeningTheURLSignsIn(t *testing.T) {
	srv, err := console.New(console.Config{Addr: testAddr, Token: "t0ken"}, newFake())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := srv.URL(), "http://127.0.0.1:4400/t0ken/"; got != want {
		t.Errorf("URL() = %q, want %q", got, want)
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, request("GET", "/t0ken/", nil))
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || loc != "events" {
		t.Errorf("answered %d to %q, want 303 to the events, below the token", w.Code, loc)
	}
	ck := w.Result().Cookies()
	if len(ck) != 1 || ck[0].Name != "hookinbox_console_4400" || strings.Contains(ck[0].Value, "t0ken") || len(ck[0].Value) < 32 ||
		!ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode || ck[0].Path != "/t0ken/" {
		t.Errorf("cookies %+v, want one HttpOnly SameSite=Strict cookie of port 4400, of path /t0ken/, that is not the token", ck)
	}

	w = httptest.NewRecorder()
	srv.ServeHTTP(w, request("GET", "/t0ken", nil))
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || loc != "t0ken/" || len(w.Result().Cookies()) != 0 {
		t.Errorf("the URL without its last slash: %d to %q, want 303 to the URL", w.Code, loc)
	}
	for _, target := range []string{"/t0ken/events", "//attacker.example/t0ken/", "/T0KEN/", "/t0ken0/", "/", "/?token=t0ken"} {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, request("GET", target, nil))
		if w.Code != http.StatusForbidden || len(w.Result().Cookies()) != 0 {
			t.Errorf("GET %s: %d, cookies %v; want 403 and none", target, w.Code, w.Result().Cookies())
		}
	}
	w = httptest.NewRecorder()
	srv.ServeHTTP(w, request("GET", "/t0ken/?next=//attacker.example", nil))
	if loc := w.Header().Get("Location"); loc != "events" {
		t.Errorf("the sign-in with a next page: Location %q, want the events, always", loc)
	}
	w = httptest.NewRecorder()
	r := request("GET", "/t0ken/", nil)
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	srv.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden || len(w.Result().Cookies()) != 0 {
		t.Errorf("the URL opened from another site's page: %d, cookies %v; want 403 and none", w.Code, w.Result().Cookies())
	}
}

// TestTheTokenStaysInTheAddressBar checks that the token leaves the
// console in nothing it sends but the sign-in's cookie path and its
// redirects: no page, no Location of a change, no log line holds it
// (and no Referer carries it: checkHeaders).
func TestTheTokenStaysInTheAddressBar(t *testing.T) {
	var log strings.Builder
	srv, err := console.New(console.Config{Addr: testAddr, Token: "t0kent0kent0ken", Log: &log}, shop(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	c := signIn(t, srv)
	var answers []*httptest.ResponseRecorder
	for _, path := range []string{"/events", "/event?key=stripe%23evt_dead", "/parked", "/destinations", "/health", "/personal", "/event?key=stripe%23evt_nobody", "/static/console.js"} {
		answers = append(answers, c.get(path))
	}
	dry := c.post("/replay-dry-run", url.Values{"key": {"stripe#evt_dead"}})
	confirm := c.post("/replay", formFields(t, dry.Body.String(), "replay"))
	answers = append(answers, dry, confirm, c.get(confirm.Header().Get("Location")))
	for _, w := range answers {
		if strings.Contains(w.Body.String(), "t0ken") || strings.Contains(w.Header().Get("Location"), "t0ken") {
			t.Errorf("an answer (%d) holds the token:\n%v\n%s", w.Code, w.Header(), w.Body)
		}
		checkHeaders(t, w)
	}
	if strings.Contains(log.String(), "t0ken") {
		t.Errorf("the log holds the token:\n%s", log.String())
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
			return c.withCookie(request("POST", c.at("/export"), url.Values{"subject": {"jane@example.com"}}))
		}, http.StatusForbidden, "CSRF"},
		{"POST with a wrong CSRF token", func() *http.Request {
			return c.withCookie(request("POST", c.at("/export"), form(strings.Repeat("0", len(c.csrf)))))
		}, http.StatusForbidden, "CSRF"},
		{"POST from a page of another origin", func() *http.Request {
			r := c.withCookie(request("POST", c.at("/export"), form(c.csrf)))
			r.Header.Set("Origin", "https://attacker.example")
			return r
		}, http.StatusForbidden, "attacker.example"},
		{"POST from another port of this machine", func() *http.Request {
			r := c.withCookie(request("POST", c.at("/export"), form(c.csrf)))
			r.Header.Set("Origin", "http://127.0.0.1:8080")
			return r
		}, http.StatusForbidden, "may not change"},
		{"POST from another site (no Origin)", func() *http.Request {
			r := c.withCookie(request("POST", c.at("/export"), form(c.csrf)))
			r.Header.Del("Origin")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
			return r
		}, http.StatusForbidden, "another site"},
		{"POST from a sandboxed frame of a browser without Sec-Fetch-Site (Origin null)", func() *http.Request {
			r := c.withCookie(request("POST", c.at("/export"), form(c.csrf)))
			r.Header.Set("Origin", "null")
			r.Header.Del("Sec-Fetch-Site")
			return r
		}, http.StatusForbidden, "opaque origin"},
		{"POST as the console's own form under no-referrer (Origin null)", func() *http.Request {
			r := c.withCookie(request("POST", c.at("/export"), form(c.csrf)))
			r.Header.Set("Origin", "null")
			return r
		}, http.StatusOK, "stripe#evt_pii"},
		{"POST as the console's own form", func() *http.Request {
			return c.withCookie(request("POST", c.at("/export"), form(c.csrf)))
		}, http.StatusOK, "stripe#evt_pii"},
	}
}

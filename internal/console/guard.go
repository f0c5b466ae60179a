package console

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// policy is every page's Content-Security-Policy: the console's own
// script and style only, no inline script, no frame, forms and fetches
// to itself.
const policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// maxForm is the largest form body the console reads.
const maxForm = 64 << 10

// setSecurityHeaders sets the headers of every answer: no framing, no
// Referer, no caching, no sniffing, nothing shared with other origins.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", policy)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// guard lets through only requests from the browser that opened the
// console's URL: the right Host, the token's cookie, and for a POST a
// same-origin Origin and the form's CSRF token.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		switch {
		case !s.hosts[r.Host]:
			refuse(w, http.StatusMisdirectedRequest, "this console answers only to "+s.cfg.Addr)
		case r.Header.Get("Sec-Fetch-Site") == "cross-site":
			refuse(w, http.StatusForbidden, "a page of another site may not use this console")
		case r.URL.Query().Has("token"):
			s.login(w, r)
		case !s.signedIn(r):
			refuse(w, http.StatusForbidden, "open the URL hookinbox console printed (it carries this run's token)")
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
			if err := s.checkPost(r); err != nil {
				refuse(w, http.StatusForbidden, err.Error())
				return
			}
			next.ServeHTTP(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// cookieName is the token's cookie: one per port, so two consoles on
// one machine keep theirs apart.
func (s *Server) cookieName() string {
	_, port, _ := net.SplitHostPort(s.cfg.Addr)
	return "hookinbox_console_" + port
}

// login turns a right token in the URL into the cookie, and sends the
// browser to the same page without it.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	if !equal(r.URL.Query().Get("token"), s.cfg.Token) {
		refuse(w, http.StatusForbidden, "wrong token: open the URL this run of hookinbox console printed")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.cfg.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	q := r.URL.Query()
	q.Del("token")
	to := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	if !strings.HasPrefix(to.Path, "/") || strings.HasPrefix(to.Path, "//") {
		to.Path = "/" // never to another host
	}
	http.Redirect(w, r, to.String(), http.StatusSeeOther)
}

// signedIn reports whether r carries the token's cookie.
func (s *Server) signedIn(r *http.Request) bool {
	c, err := r.Cookie(s.cookieName())
	return err == nil && equal(c.Value, s.cfg.Token)
}

// checkPost refuses a POST from another origin or without the form's
// CSRF token. Under Referrer-Policy: no-referrer a browser sends the
// console's own forms with Origin "null", and Sec-Fetch-Site
// "same-origin", which no page can forge.
func (s *Server) checkPost(r *http.Request) error {
	origin := r.Header.Get("Origin")
	site := r.Header.Get("Sec-Fetch-Site")
	switch {
	case origin == "null" && site != "same-origin":
		return errors.New("a form from an opaque origin may not change this console")
	case origin != "" && origin != "null" && !s.sameOrigin(origin):
		return fmt.Errorf("a form from %s may not change this console", origin)
	case site != "" && site != "same-origin":
		return errors.New("a form from another site may not change this console")
	}
	if err := r.ParseForm(); err != nil {
		return fmt.Errorf("unreadable form: %w", err)
	}
	if !equal(r.PostForm.Get("csrf"), s.csrf) {
		return errors.New("the form's CSRF token is missing or wrong: reload the page and try again")
	}
	return nil
}

// sameOrigin reports whether origin is the console's own.
func (s *Server) sameOrigin(origin string) bool {
	u, err := url.Parse(origin)
	return err == nil && u.Scheme == "http" && s.hosts[u.Host] && u.Path == ""
}

// refuse answers a request the guard turns away, in plain text.
func refuse(w http.ResponseWriter, status int, why string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, "hookinbox console: %s\n", why)
}

// derive returns a secret of its own for label, from the run's token.
func derive(token, label string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(label))
	return hex.EncodeToString(m.Sum(nil))
}

// equal compares secrets in constant time.
func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

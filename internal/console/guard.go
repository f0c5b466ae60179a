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

// guard lets through only requests of the browser that opened the
// console's URL: the right Host, the run's token as the path's first
// segment, and the cookie opening that URL set; for a POST also a
// same-origin Origin and the form's CSRF token. The cookie alone opens
// nothing: browsers send it to every port of 127.0.0.1, where another
// local user may listen, but the path only here.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		rest, ok := s.belowToken(r.URL.Path)
		switch site := r.Header.Get("Sec-Fetch-Site"); {
		case !s.hosts[r.Host]:
			refuse(w, http.StatusMisdirectedRequest, "this console answers only to "+s.cfg.Addr)
		case r.URL.Path == "/favicon.ico":
			w.WriteHeader(http.StatusNoContent) // what browsers ask of every origin
		case site != "" && site != "none" && site != "same-origin":
			refuse(w, http.StatusForbidden, "a page of another site or port may not use this console")
		case !ok:
			refuse(w, http.StatusForbidden, "open the URL hookinbox console printed (it carries this run's token)")
		case rest == "":
			redirect(w, s.cfg.Token+"/")
		case rest == "/" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
			s.signIn(w)
		case !s.signedIn(r):
			refuse(w, http.StatusForbidden, "this browser has not opened the URL hookinbox console printed: open it here first")
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

// belowToken returns the rest of path after its first segment ("" or
// "/..."), and whether that segment is the run's token.
func (s *Server) belowToken(path string) (rest string, ok bool) {
	seg, rest, below := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if below {
		rest = "/" + rest
	}
	return rest, strings.HasPrefix(path, "/") && equal(seg, s.cfg.Token)
}

// cookieName is the cookie's name: one per port, so two consoles on one
// machine keep theirs apart.
func (s *Server) cookieName() string {
	_, port, _ := net.SplitHostPort(s.cfg.Addr)
	return "hookinbox_console_" + port
}

// signIn gives the browser that opened the console's URL its cookie,
// sent only below the token's path, and shows it the events. The
// cookie's value is derived from the token and does not reveal it.
func (s *Server) signIn(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: s.cookie, Path: "/" + s.cfg.Token + "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	redirect(w, "events")
}

// signedIn reports whether r carries the cookie.
func (s *Server) signedIn(r *http.Request) bool {
	c, err := r.Cookie(s.cookieName())
	return err == nil && equal(c.Value, s.cookie)
}

// redirect sends the browser to a page given relative to the current
// one (every page is one level below the token's path), with a GET.
func redirect(w http.ResponseWriter, to string) {
	w.Header().Set("Location", to)
	w.WriteHeader(http.StatusSeeOther)
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

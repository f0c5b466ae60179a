// Package lostanswer is a fault for tests: an HTTP proxy in front of
// DynamoDB that lets a write through and loses its answer, as a network
// that drops a connection after the request arrived. The SDK then sends
// the write again, and the code under test must recognise its own first
// attempt. A Proxy is safe for concurrent use.
package lostanswer

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Proxy is an HTTP proxy in front of DynamoDB. It forwards every
// request; armed, it lets the n-th write after arming
// (PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems)
// reach DynamoDB, reads the answer, and closes the connection without
// sending a byte of it: the write is applied, the client sees the
// connection end, and the SDK sends the request again.
type Proxy struct {
	// URL is the proxy's address: the endpoint to give the client.
	URL    string
	target string
	mu     sync.Mutex
	writes int // writes forwarded
	loseAt int // lose the answer of this write; 0: none
	lost   int // answers lost
}

// Start starts a Proxy on 127.0.0.1 in front of the DynamoDB endpoint
// target, stopped when t ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	l := &Proxy{target: target}
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	l.URL = srv.URL
	return l
}

// Count returns the writes forwarded so far and the answers lost.
func (l *Proxy) Count() (writes, lost int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes, l.lost
}

// LoseNth arms the proxy to lose the answer of the n-th write from now.
func (l *Proxy) LoseNth(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loseAt = l.writes + n
}

var writeTargets = []string{".PutItem", ".UpdateItem", ".DeleteItem", ".BatchWriteItem", ".TransactWriteItems"}

// ServeHTTP implements http.Handler.
func (l *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, l.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	target := r.Header.Get("X-Amz-Target")
	isWrite := false
	for _, s := range writeTargets {
		isWrite = isWrite || strings.HasSuffix(target, s)
	}
	l.mu.Lock()
	lose := false
	if isWrite {
		l.writes++
		if lose = l.writes == l.loseAt; lose {
			l.lost++
		}
	}
	l.mu.Unlock()
	if lose {
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		return
	}
	for k, vs := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

package destination

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/effects"
)

// plainServer reads each request whole, its body by its Content-Length,
// and answers 200, without ever saying 100 Continue; when refuse417 is
// set it answers 417 Expectation Failed to a request that asks Expect,
// without reading its body, as a server (or a proxy) that knows no
// expectation does. It returns its URL, how many bodies it read whole and
// how many 417s it answered.
func plainServer(t *testing.T, refuse417 bool) (string, *atomic.Int32, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	var bodies, refused atomic.Int32
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for {
					length, expect := 0, false
					line, err := r.ReadString('\n')
					for ; err == nil && line != "\r\n"; line, err = r.ReadString('\n') {
						name, value, _ := strings.Cut(strings.TrimSpace(line), ":")
						switch strings.ToLower(name) {
						case "content-length":
							length, _ = strconv.Atoi(strings.TrimSpace(value))
						case "expect":
							expect = true
						}
					}
					if err != nil {
						return
					}
					if expect && refuse417 {
						refused.Add(1)
						fmt.Fprint(conn, "HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
						return
					}
					if _, err := io.CopyN(io.Discard, r, int64(length)); err != nil {
						return
					}
					bodies.Add(1)
					fmt.Fprint(conn, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
				}
			}()
		}
	}()
	return "http://" + l.Addr().String() + "/hooks", &bodies, &refused
}

// TestExpectContinue: a delivery over expectContinueOver asks Expect:
// 100-continue. A destination that never answers 100 and just reads the
// body gets it after the transport's ExpectContinueTimeout, long before
// the delivery's; one that answers 417 Expectation Failed gets the body
// once more without asking, and is delivered to once, not refused.
func TestExpectContinue(t *testing.T) {
	big := testEvent
	big.ID, big.Raw = "evt_big", []byte(`{"id":"evt_big","pad":"`+strings.Repeat("x", 64<<10)+`"}`)
	for _, refuse417 := range []bool{false, true} {
		t.Run(fmt.Sprintf("417 %v", refuse417), func(t *testing.T) {
			url, bodies, refused := plainServer(t, refuse417)
			s := newSet(t, nil, httpConfig("plain", url))
			begin := time.Now()
			err := s.Wrap(nil).Handle(context.Background(), big, effects.NewMemoryLedger().For(big.Key()))
			if err != nil || bodies.Load() != 1 {
				t.Errorf("Handle = %v, %d bodies read (%d 417s answered); want delivered once", err, bodies.Load(), refused.Load())
			}
			if took := time.Since(begin); took > defaultTimeout/2 {
				t.Errorf("the delivery took %v", took)
			}
		})
	}
}

// TestExpectContinueHTTP2: a large delivery to an HTTP/2 destination is
// delivered once, its body whole.
func TestExpectContinueHTTP2(t *testing.T) {
	big := testEvent
	big.ID, big.Raw = "evt_big", []byte(`{"id":"evt_big","pad":"`+strings.Repeat("x", 64<<10)+`"}`)
	var got atomic.Int32
	var proto atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		proto.Store(r.Proto)
		if len(b) == int(r.ContentLength) && len(b) > expectContinueOver {
			got.Add(1)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	client := newHTTPClient(defaultTimeout, true)
	client.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	s := newSet(t, client, httpConfig("h2", srv.URL+"/hooks"))
	begin := time.Now()
	if err := s.Wrap(nil).Handle(context.Background(), big, effects.NewMemoryLedger().For(big.Key())); err != nil || got.Load() != 1 {
		t.Errorf("Handle = %v, %d whole bodies; want delivered once", err, got.Load())
	}
	if p, _ := proto.Load().(string); p != "HTTP/2.0" {
		t.Errorf("proto %q; want HTTP/2.0", p)
	}
	t.Logf("took %v", time.Since(begin))
}

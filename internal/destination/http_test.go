package destination

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// earlyServer answers every request with status as soon as it has read
// its headers, never reading the body, and closes the connection: what a
// server does with a body over its limit (413), or one that acknowledges
// first. It returns its URL and how many requests it answered.
func earlyServer(t *testing.T, status int) (string, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	var answered atomic.Int32
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(conn)
			for line, err := r.ReadString('\n'); err == nil && line != "\r\n"; line, err = r.ReadString('\n') {
			}
			answered.Add(1)
			fmt.Fprintf(conn, "HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status, http.StatusText(status))
			_ = conn.Close()
		}
	}()
	return "http://" + l.Addr().String() + "/hooks", &answered
}

// TestEarlyAnswerIsTheAnswer: a destination that answers a large body
// before reading it, and closes, is heard: an early 413 refuses the event
// (parked, not retried), an early 200 delivers it, once.
func TestEarlyAnswerIsTheAnswer(t *testing.T) {
	big := testEvent
	big.ID, big.Raw = "evt_big", []byte(`{"id":"evt_big","pad":"`+strings.Repeat("x", 4<<20)+`"}`)
	tests := []struct {
		status int
		kind   error
	}{{http.StatusRequestEntityTooLarge, ErrRefused}, {http.StatusOK, nil}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			url, answered := earlyServer(t, tt.status)
			s := newSet(t, nil, httpConfig("early", url))
			err := s.Wrap(nil).Handle(context.Background(), big, effects.NewMemoryLedger().For(big.Key()))
			switch {
			case tt.kind == nil && err != nil:
				t.Errorf("Handle = %v; want delivered", err)
			case tt.kind != nil && (!errors.Is(err, tt.kind) || !webhook.IsPermanent(err)):
				t.Errorf("Handle = %v; want %v, parked", err, tt.kind)
			}
			if got := answered.Load(); got != 1 {
				t.Errorf("the destination answered %d requests; want 1", got)
			}
		})
	}
}

package destination

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/providers/standard"
	"github.com/hookinbox/hookinbox/webhook"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// testSecrets answers every ARN with testSecret, and the header ARN with
// a token.
func testSecrets(_ context.Context, arn string) ([]string, error) {
	if arn == testHeaderARN {
		return []string{"token-1"}, nil
	}
	return []string{testSecret}, nil
}

var testEvent = webhook.Event{Provider: "stripe", ID: "evt_1", Type: "invoice.paid", Raw: []byte(`{"id":"evt_1"}`),
	Received: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}

// received is what a test server got.
type received struct {
	mu   sync.Mutex
	reqs []*http.Request
	errs []error // signature checks
}

func (r *received) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// server answers with h after checking the request's signature.
func server(t testing.TB, h http.HandlerFunc) (*httptest.Server, *received) {
	t.Helper()
	got := &received{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hdr := map[string]string{}
		for k := range r.Header {
			hdr[strings.ToLower(k)] = r.Header.Get(k)
		}
		_, err := (&standard.Verifier{Secrets: []string{testSecret}}).Verify(r.Context(), webhook.Request{Method: "POST", Header: hdr, Body: body})
		got.mu.Lock()
		got.reqs, got.errs = append(got.reqs, r), append(got.errs, err)
		got.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func status(code int, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
	}
}

func newSet(t *testing.T, client *http.Client, cfgs ...Config) *Set {
	t.Helper()
	s, err := New(cfgs, Options{Secrets: testSecrets, HTTP: client, LocalHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func httpConfig(name, url string) Config {
	return Config{Name: name, URL: url, Events: []string{"*"}, Secret: testSecretARN}
}

// refusedURL returns a loopback URL nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/hooks"
	_ = l.Close()
	return url
}

// TestDeliveryClasses: each kind of answer, with the effect ledger and the
// delivery log on dynalite: what the event's error says (retried, parked,
// gone, Retry-After), whether the ledger records the destination, and the
// attempt logged with its status.
func TestDeliveryClasses(t *testing.T) {
	hang := func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
	reset := func(w http.ResponseWriter, r *http.Request) {
		c, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = c.(*net.TCPConn).SetLinger(0) // a RST, not a FIN
			_ = c.Close()
		}
	}
	tests := []struct {
		name       string
		handler    http.HandlerFunc // nil: nothing listens
		kind       error            // nil: delivered
		permanent  bool
		retryAfter time.Duration
	}{
		{name: "200", handler: status(200)},
		{name: "204", handler: status(204)},
		{name: "408", handler: status(408), kind: ErrRetry},
		{name: "429 Retry-After seconds", handler: status(429, "Retry-After", "120"), kind: ErrRetry, retryAfter: 2 * time.Minute},
		{name: "503 Retry-After date", handler: status(503, "Retry-After", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)), kind: ErrRetry, retryAfter: time.Hour},
		{name: "429 Retry-After past any wait", handler: status(429, "Retry-After", "9999999999"), kind: ErrRetry, retryAfter: 24 * time.Hour},
		{name: "500", handler: status(500), kind: ErrRetry},
		{name: "timeout", handler: hang, kind: ErrRetry},
		{name: "connection refused", kind: ErrRetry},
		{name: "connection reset", handler: reset, kind: ErrRetry},
		{name: "400", handler: status(400), kind: ErrRefused, permanent: true},
		{name: "404", handler: status(404), kind: ErrRefused, permanent: true},
		{name: "301 not followed", handler: status(301, "Location", "https://elsewhere.example.com"), kind: ErrRefused, permanent: true},
		{name: "410", handler: status(410), kind: ErrGone, permanent: true},
	}
	// The ledger and the delivery log on dynalite.
	db, table := devstacktest.ForTest(t).DynamoDB(), devstacktest.NewTestStack(t).Tables["InboxTable"]
	effectLedger, log := ledger.New(db, table, time.Hour), NewLog(db, table, time.Hour)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, got := refusedURL(t), &received{}
			if tt.handler != nil {
				var srv *httptest.Server
				srv, got = server(t, tt.handler)
				url = srv.URL + "/hooks"
			}
			s, err := New([]Config{httpConfig("crm", url)}, Options{Secrets: testSecrets, HTTP: newHTTPClient(200*time.Millisecond, true), Log: log, LocalHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			ev := testEvent
			ev.ID = fmt.Sprintf("evt_class_%d", i)
			err = s.Wrap(nil).Handle(context.Background(), ev, effectLedger.For(ev.Key()))
			switch {
			case tt.kind == nil && err != nil:
				t.Fatalf("Handle = %v; want delivered", err)
			case tt.kind != nil && !errors.Is(err, tt.kind):
				t.Fatalf("Handle = %v; want %v", err, tt.kind)
			case webhook.IsPermanent(err) != tt.permanent:
				t.Errorf("Handle = %v: permanent %v; want %v", err, webhook.IsPermanent(err), tt.permanent)
			}
			if got := webhook.RetryAfterOf(err).Round(time.Minute); got != tt.retryAfter {
				t.Errorf("RetryAfterOf = %v; want %v", got, tt.retryAfter)
			}
			if tt.kind != nil && !cmp.Equal(failed(err), []string{"crm"}) {
				t.Errorf("failed = %q; want [crm]", failed(err))
			}
			recs, _ := effectLedger.Records(context.Background(), ev.Key())
			if wantRecs := map[bool]int{true: 1, false: 0}[tt.kind == nil]; len(recs) != wantRecs {
				t.Errorf("ledger records %d effects; want %d", len(recs), wantRecs)
			}
			logged, err := log.Read(context.Background(), ev.Key())
			wantStatus := 0
			if tt.handler != nil && tt.name != "timeout" && tt.name != "connection reset" {
				wantStatus, _ = strconv.Atoi(tt.name[:3])
			}
			if err != nil || len(logged) != 1 || logged[0].Attempts != 1 || logged[0].LastStatus != wantStatus || logged[0].Delivered != (tt.kind == nil) {
				t.Errorf("delivery log = %+v, %v; want 1 attempt answered %d", logged, err, wantStatus)
			}
			if tt.handler != nil && (got.count() < 1 || got.errs[0] != nil) {
				t.Errorf("server got %d requests (signature errors %v); want 1, verified", got.count(), got.errs)
			}
		})
	}
}

func TestRequestHeadersAndStaticHeader(t *testing.T) {
	srv, got := server(t, status(200))
	c := httpConfig("crm", srv.URL)
	c.Header, c.HeaderSecret = "X-Token", testHeaderARN
	s := newSet(t, nil, c)
	if err := s.Wrap(nil).Handle(context.Background(), testEvent, effects.NewMemoryLedger().For(testEvent.Key())); err != nil {
		t.Fatal(err)
	}
	r := got.reqs[0]
	want := map[string]string{"X-Token": "token-1", "Content-Type": "application/json", "Webhook-Id": WebhookID(testEvent.Key(), "crm"), "User-Agent": userAgent}
	for k, v := range want {
		if r.Header.Get(k) != v {
			t.Errorf("header %s = %q; want %q", k, r.Header.Get(k), v)
		}
	}
	if r.Method != http.MethodPost || got.errs[0] != nil {
		t.Errorf("%s, signature %v; want POST, verified", r.Method, got.errs[0])
	}
}

func TestEachDestinationIsItsOwnEffect(t *testing.T) {
	okSrv, okGot := server(t, status(200))
	var failing = true
	var mu sync.Mutex
	flaky, flakyGot := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if failing {
			w.WriteHeader(503)
		}
	})
	s := newSet(t, nil, httpConfig("ok", okSrv.URL), httpConfig("flaky", flaky.URL),
		Config{Name: "orders-only", URL: okSrv.URL, Events: []string{"shopify:orders/*"}, Secret: testSecretARN})
	ledger := effects.NewMemoryLedger()
	var bizRuns int
	biz := businessFunc(func(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
		return effects.Do(ctx, fx, "crm-note", func(context.Context, string) error { bizRuns++; return nil })
	})
	h := s.Wrap(biz)
	if err := h.Handle(context.Background(), testEvent, ledger.For(testEvent.Key())); !errors.Is(err, ErrRetry) {
		t.Fatalf("first attempt = %v; want ErrRetry", err)
	}
	mu.Lock()
	failing = false
	mu.Unlock()
	if err := h.Handle(context.Background(), testEvent, ledger.For(testEvent.Key())); err != nil {
		t.Fatalf("second attempt = %v", err)
	}
	if okGot.count() != 1 || flakyGot.count() != 2 || bizRuns != 1 {
		t.Errorf("ok got %d, flaky %d, business ran %d; want 1, 2, 1 (orders-only matches nothing)", okGot.count(), flakyGot.count(), bizRuns)
	}
	recs, _ := ledger.Records(context.Background(), testEvent.Key())
	var names []string
	for _, r := range recs {
		names = append(names, r.Effect)
	}
	if want := []string{"crm-note", "destination:flaky", "destination:ok"}; !cmp.Equal(names, want) {
		t.Errorf("ledger = %q; want %q", names, want)
	}
	if a, b := flakyGot.reqs[0].Header.Get("webhook-id"), flakyGot.reqs[1].Header.Get("webhook-id"); a != b {
		t.Errorf("webhook-id %q then %q; want the same on a redelivery", a, b)
	}
}

type businessFunc func(ctx context.Context, ev webhook.Event, fx effects.Runner) error

func (f businessFunc) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	return f(ctx, ev, fx)
}

func TestNoHandler(t *testing.T) {
	srv, _ := server(t, status(200))
	s := newSet(t, nil, Config{Name: "orders", URL: srv.URL, Events: []string{"shopify:orders/*"}, Secret: testSecretARN})
	ignoring := businessFunc(func(context.Context, webhook.Event, effects.Runner) error { return webhook.ErrNoHandler })
	orders := webhook.Event{Provider: "shopify", ID: "1", Type: "orders/paid", Raw: []byte(`{}`)}
	tests := []struct {
		name     string
		biz      Business
		ev       webhook.Event
		wantNone bool
	}{
		{"no business, no match", nil, testEvent, true},
		{"business ignores, no match", ignoring, testEvent, true},
		{"business ignores, a destination matches", ignoring, orders, false},
		{"no business, a destination matches", nil, orders, false},
	}
	for _, tt := range tests {
		err := s.Wrap(tt.biz).Handle(context.Background(), tt.ev, effects.NewMemoryLedger().For(tt.ev.Key()))
		if got := errors.Is(err, webhook.ErrNoHandler); got != tt.wantNone || (!tt.wantNone && err != nil) {
			t.Errorf("%s: Handle = %v; want ErrNoHandler %v", tt.name, err, tt.wantNone)
		}
	}
}

func TestCombine(t *testing.T) {
	busy := errors.New("destination a: " + webhook.ErrBusy.Error())
	busyErr := &wrapErr{busy, webhook.ErrBusy}
	retryErr := &deliveryError{Destination: "b", Answer: answer{Text: "503"}, kind: ErrRetry}
	goneErr := &deliveryError{Destination: "c", Answer: answer{Text: "410"}, kind: ErrGone}
	tests := []struct {
		name                  string
		berr                  error
		errs                  []error
		nilErr, isBusy, perma bool
	}{
		{name: "all fine", errs: []error{nil, nil}, nilErr: true},
		{name: "only busy", errs: []error{busyErr, nil}, isBusy: true},
		{name: "busy and retry", errs: []error{busyErr, retryErr}},
		{name: "busy and business failed", berr: errors.New("crm down"), errs: []error{busyErr}},
		{name: "gone alone", errs: []error{goneErr, nil}, perma: true},
		{name: "gone beside a retry: held", errs: []error{goneErr, retryErr}},
		{name: "gone beside a busy one: held, the attempt uncounted", errs: []error{goneErr, busyErr}, isBusy: true},
		{name: "gone beside a failed business: held", berr: errors.New("crm down"), errs: []error{goneErr}},
		{name: "business refused beside a retry: held", berr: webhook.Permanent(errors.New("bad price")), errs: []error{retryErr}},
		{name: "business refused and gone", berr: webhook.Permanent(errors.New("bad price")), errs: []error{goneErr}, perma: true},
	}
	for _, tt := range tests {
		err := Combine(append([]error{tt.berr}, tt.errs...)...)
		if (err == nil) != tt.nilErr || errors.Is(err, webhook.ErrBusy) != tt.isBusy || webhook.IsPermanent(err) != tt.perma {
			t.Errorf("%s: Combine = %v (busy %v, permanent %v); want nil %v, busy %v, permanent %v",
				tt.name, err, errors.Is(err, webhook.ErrBusy), webhook.IsPermanent(err), tt.nilErr, tt.isBusy, tt.perma)
		}
		if names := failed(err); slices.Contains(tt.errs, error(goneErr)) && !slices.Contains(names, "c") {
			t.Errorf("%s: failed = %v; want it to name c, held or not", tt.name, names)
		}
	}
}

type wrapErr struct{ msg, kind error }

func (e *wrapErr) Error() string { return e.msg.Error() }
func (e *wrapErr) Unwrap() error { return e.kind }

func TestBusyDestinationIsNotTried(t *testing.T) {
	release := make(chan struct{})
	slow, slowGot := server(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	fast, fastGot := server(t, status(200))
	c := httpConfig("slow", slow.URL)
	c.Concurrency = 1
	s := newSet(t, nil, c, httpConfig("fast", fast.URL))
	ev2 := testEvent
	ev2.ID = "evt_2"
	ledger := effects.NewMemoryLedger()
	first := make(chan error)
	go func() { first <- s.Wrap(nil).Handle(context.Background(), testEvent, ledger.For(testEvent.Key())) }()
	for slowGot.count() == 0 { // bounded by the test's timeout
		time.Sleep(time.Millisecond)
	}
	err := s.Wrap(nil).Handle(context.Background(), ev2, ledger.For(ev2.Key()))
	if !errors.Is(err, webhook.ErrBusy) {
		t.Errorf("second event while slow is full = %v; want webhook.ErrBusy", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("first event = %v", err)
	}
	if slowGot.count() != 1 || fastGot.count() != 2 {
		t.Errorf("slow got %d, fast %d; want 1 (the second not tried), 2", slowGot.count(), fastGot.count())
	}
	recs, _ := ledger.Records(context.Background(), ev2.Key())
	if len(recs) != 1 || recs[0].Effect != "destination:fast" {
		t.Errorf("second event's ledger = %v; want destination:fast only", recs)
	}
}

// rawServer answers every connection with status line line (after
// "HTTP/1.1 "), without a body, and returns its URL.
func rawServer(t *testing.T, line string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = http.ReadRequest(bufio.NewReader(c))
				_, _ = io.WriteString(c, "HTTP/1.1 "+line+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}()
		}
	}()
	return "http://" + l.Addr().String() + "/hooks"
}

// TestHostileAnswerIsCut: a destination's status line is its own text:
// a long one, with control characters, is kept cut to MaxAnswerText in
// the delivery log, the ledger and the error; one too long to read is no
// answer, and retried.
func TestHostileAnswerIsCut(t *testing.T) {
	db, table := devstacktest.ForTest(t).DynamoDB(), devstacktest.NewTestStack(t).Tables["InboxTable"]
	effectLedger, log := ledger.New(db, table, time.Hour), NewLog(db, table, time.Hour)
	long := strings.Repeat("\x1b[2J\x1b[31mpwned\x07 é", 500)
	tests := []struct {
		name, line string
		want       string // the answer kept starts with it
		kind       error  // nil: delivered
	}{
		{"refused", "400 " + long, "400 \x1b[2J", ErrRefused},
		{"delivered", "200 " + long, "200 \x1b[2J", nil},
		{"headers too long to read", "503 " + strings.Repeat("x", maxAnswerHeaders+1), "no answer:", ErrRetry},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New([]Config{httpConfig("crm", rawServer(t, tt.line))}, Options{Secrets: testSecrets, HTTP: newHTTPClient(2*time.Second, true), Log: log, LocalHTTP: true})
			if err != nil {
				t.Fatal(err)
			}
			ev := testEvent
			ev.ID = fmt.Sprintf("evt_hostile_%d", i)
			err = s.Wrap(nil).Handle(context.Background(), ev, effectLedger.For(ev.Key()))
			if (tt.kind == nil) != (err == nil) || (tt.kind != nil && !errors.Is(err, tt.kind)) {
				t.Fatalf("Handle = %.300v; want %v", err, tt.kind)
			}
			kept := map[string]string{}
			var de *deliveryError
			if errors.As(err, &de) {
				kept["error"] = de.Answer.Text
			}
			logged, lerr := log.Read(context.Background(), ev.Key())
			if lerr != nil || len(logged) != 1 {
				t.Fatalf("delivery log = %+v, %v; want one attempt", logged, lerr)
			}
			kept["log"] = logged[0].LastAnswer
			if recs, _ := effectLedger.Records(context.Background(), ev.Key()); len(recs) == 1 {
				kept["ledger"] = recs[0].Result
			}
			for where, text := range kept {
				if len(text) > MaxAnswerText || !strings.HasPrefix(text, tt.want) || !utf8.ValidString(text) {
					t.Errorf("%s keeps %d bytes %.60q; want at most %d, starting %q", where, len(text), text, MaxAnswerText, tt.want)
				}
			}
		})
	}
}

// TestAttemptCutByTheDeadlineIsLogged: a destination that answers only
// after the effect's deadline: the attempt is cut, retried, and still in
// the delivery log, with its answer.
func TestAttemptCutByTheDeadlineIsLogged(t *testing.T) {
	db, table := devstacktest.ForTest(t).DynamoDB(), devstacktest.NewTestStack(t).Tables["InboxTable"]
	log := NewLog(db, table, time.Hour)
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	s, err := New([]Config{httpConfig("crm", srv.URL)}, Options{Secrets: testSecrets, Log: log, LocalHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := s.Wrap(nil).Handle(ctx, testEvent, effects.NewMemoryLedger().For(testEvent.Key())); !errors.Is(err, ErrRetry) {
		t.Fatalf("Handle = %v; want ErrRetry", err)
	}
	logged, err := log.Read(context.Background(), testEvent.Key())
	if err != nil || len(logged) != 1 || logged[0].Attempts != 1 || logged[0].LastAnswer != "timeout: no answer in time" {
		t.Errorf("delivery log = %+v, %v; want the attempt cut by the deadline", logged, err)
	}
}

// failingLog is a delivery log whose writes fail.
type failingLog struct{}

func (failingLog) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return nil, errors.New("ProvisionedThroughputExceededException")
}

func (failingLog) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return nil, errors.New("ProvisionedThroughputExceededException")
}

// TestDeliveryLogFailureChangesNoOutcome: a delivery log that cannot be
// written is logged as such, and the delivery's outcome stands: delivered
// and recorded in the ledger, or retried.
func TestDeliveryLogFailureChangesNoOutcome(t *testing.T) {
	for _, tt := range []struct {
		code int
		kind error
	}{{200, nil}, {503, ErrRetry}} {
		srv, _ := server(t, status(tt.code))
		var logged strings.Builder
		s, err := New([]Config{httpConfig("crm", srv.URL)}, Options{Secrets: testSecrets, LocalHTTP: true,
			Log: NewLog(failingLog{}, "inbox", time.Hour), Logger: slog.New(slog.NewTextHandler(&logged, nil))})
		if err != nil {
			t.Fatal(err)
		}
		ledger := effects.NewMemoryLedger()
		err = s.Wrap(nil).Handle(context.Background(), testEvent, ledger.For(testEvent.Key()))
		recs, _ := ledger.Records(context.Background(), testEvent.Key())
		if (tt.kind == nil) != (err == nil) || (tt.kind != nil && !errors.Is(err, tt.kind)) || len(recs) != map[bool]int{true: 1}[tt.kind == nil] {
			t.Errorf("%d: Handle = %v, %d ledger records; want %v", tt.code, err, len(recs), tt.kind)
		}
		if !strings.Contains(logged.String(), "delivery not logged") {
			t.Errorf("%d: nothing says the delivery log was not written:\n%s", tt.code, logged.String())
		}
	}
}

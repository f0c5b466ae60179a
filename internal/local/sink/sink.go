// Package sink is a local receiver of hookinbox's destination deliveries,
// for trying a destination out: it verifies each delivery's Standard
// Webhooks signature as any receiver should, answers, and records what it
// got, with how many times each webhook-id came. `hookinbox sink` serves
// it and prints one line per delivery; `hookinbox chaos --destination`
// runs one in process and compares what it received with what the
// pipeline accepted.
package sink

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/standard"
	"github.com/hookinbox/hookinbox/webhook"

	"github.com/hookinbox/hookinbox/internal/destination"
)

// maxBody is the largest body the sink reads; a larger one is answered 413.
const maxBody = 8 << 20

// Refusals of a delivery whose signature verified but whose body is not
// the destination body hookinbox sends.
var (
	ErrNotDestinationBody = errors.New("body is not a hookinbox destination body")
	ErrIDMismatch         = errors.New("body id differs from webhook-id")
)

// Delivery is one request the sink answered.
type Delivery struct {
	At     time.Time
	Status int   // what the sink answered
	Err    error // why it was refused; nil when it verified
	// The rest is set only when the signature verified: an unsigned
	// header decides nothing.
	ID      string // webhook-id
	Body    destination.Body
	Raw     []byte // the body as received
	Attempt int    // 1 for the first verified delivery of this webhook-id
}

// Redelivery reports whether the webhook-id came, verified, before.
func (d Delivery) Redelivery() bool { return d.Attempt > 1 }

// Options say how a Sink verifies and answers.
type Options struct {
	// Secrets are the "whsec_..." secrets (several while rotating); a
	// delivery signed by any one verifies.
	Secrets []string
	// Status is what a verified delivery is answered; default 200. Pass
	// 503 or 429 to see hookinbox retry, 410 to see it park.
	Status int
	// FailFirst, when positive, answers Status only to the first
	// FailFirst attempts of each webhook-id, and 200 after: an endpoint
	// that recovers.
	FailFirst int
	// Delay is how long the sink waits before answering: a slow endpoint.
	Delay time.Duration
	// OnDelivery, when set, is told of each delivery as it is answered.
	OnDelivery func(Delivery)
	// Keep keeps every delivery, bodies included, for Deliveries; a
	// long-running sink leaves it off.
	Keep bool
	// Now is the clock the signature's timestamp is checked against;
	// nil means time.Now.
	Now func() time.Time
}

// Sink verifies, answers and records deliveries. Safe for concurrent use.
type Sink struct {
	opts     Options
	verifier *standard.Verifier

	mu         sync.Mutex
	attempts   map[string]int // verified deliveries by webhook-id
	deliveries []Delivery
}

// New returns a Sink, or an error when a secret cannot verify (none, not
// base64, a whsk_ signing key).
func New(opts Options) (*Sink, error) {
	if opts.Status == 0 {
		opts.Status = http.StatusOK
	}
	if opts.Status < 200 || opts.Status > 599 {
		return nil, fmt.Errorf("status %d is not an HTTP status", opts.Status)
	}
	v := &standard.Verifier{Secrets: opts.Secrets, Now: opts.Now}
	if err := v.Validate(); err != nil {
		return nil, fmt.Errorf("sink: %w", err)
	}
	return &Sink{opts: opts, verifier: v, attempts: map[string]int{}}, nil
}

// NewSecret returns a fresh "whsec_" secret: 24 random bytes, base64.
func NewSecret() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// ServeHTTP implements http.Handler: POST only, the signature verified
// (constant-time, the timestamp within five minutes of now) before the
// body is read as a destination body.
func (s *Sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d := s.receive(r)
	if d.Err == nil && s.opts.Delay > 0 {
		select {
		case <-r.Context().Done():
		case <-time.After(s.opts.Delay):
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(d.Status)
	if d.Err != nil {
		fmt.Fprintln(w, d.Err)
	} else {
		fmt.Fprintf(w, "%d %s\n", d.Status, http.StatusText(d.Status))
	}
	if s.opts.OnDelivery != nil {
		s.opts.OnDelivery(d)
	}
}

// receive verifies and records one request and says what to answer.
func (s *Sink) receive(r *http.Request) Delivery {
	d := Delivery{At: time.Now()}
	if r.Method != http.MethodPost {
		return s.record(d, http.StatusMethodNotAllowed, fmt.Errorf("method %s not allowed", r.Method))
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	switch {
	case err != nil:
		return s.record(d, http.StatusBadRequest, fmt.Errorf("read the body: %w", err))
	case len(raw) > maxBody:
		return s.record(d, http.StatusRequestEntityTooLarge, fmt.Errorf("body over %d bytes", maxBody))
	}
	req := webhook.Request{Method: r.Method, Header: map[string]string{}, Body: raw}
	for name := range r.Header {
		req.Header[strings.ToLower(name)] = r.Header.Get(name)
	}
	evs, err := s.verifier.Verify(context.Background(), req)
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, webhook.ErrUnauthenticated) {
			status = http.StatusUnauthorized
		}
		return s.record(d, status, err)
	}
	d.ID, d.Raw = evs[0].ID, raw
	if err := json.Unmarshal(raw, &d.Body); err != nil || d.Body.Key == "" || d.Body.Provider == "" || len(d.Body.Payload) == 0 {
		return s.record(d, http.StatusBadRequest, fmt.Errorf("%w: want id, provider, type, key, received_at and payload", ErrNotDestinationBody))
	}
	if d.Body.ID != d.ID {
		return s.record(d, http.StatusBadRequest, ErrIDMismatch)
	}
	return s.record(d, s.opts.Status, nil)
}

// record counts a verified delivery's attempt, picks its answer and keeps it.
func (s *Sink) record(d Delivery, status int, err error) Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	d.Status, d.Err = status, err
	if d.ID != "" {
		s.attempts[d.ID]++
		d.Attempt = s.attempts[d.ID]
		if err == nil && s.opts.FailFirst > 0 && d.Attempt > s.opts.FailFirst {
			d.Status = http.StatusOK
		}
	}
	if s.opts.Keep {
		s.deliveries = append(s.deliveries, d)
	}
	return d
}

// Deliveries returns every delivery answered so far, in order, when
// Options.Keep is set.
func (s *Sink) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.deliveries...)
}

package processor_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/gopay"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// sentMessages records what an intake sends.
type sentMessages struct {
	mu   sync.Mutex
	envs []queue.Envelope
}

func (s *sentMessages) Send(_ context.Context, env queue.Envelope) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.envs = append(s.envs, env)
	return nil
}

func (s *sentMessages) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.envs)
}

// TestGoPayNotFoundIsRetriedThenIgnoredForTheWindow: a payment GoPay does
// not know is fetched again once after a backoff (GoPay's API may lag its
// notification), then ends IGNORED "not found at gopay", never parked;
// until NotFoundWindow has passed every notification of that id is a
// duplicate that sends nothing, so it is not fetched again; after it, the
// next notification is claimed and fetched.
func TestGoPayNotFoundIsRetriedThenIgnoredForTheWindow(t *testing.T) {
	var fetches int
	fetch := func(_ context.Context, id string, _ []byte) ([]byte, error) {
		fetches++
		return nil, fmt.Errorf("get gopay payment %s: %w", id, provider.ErrNotFound)
	}
	var emitted bytes.Buffer
	f := newFixture(t, func(c *processor.Config) {
		c.Fetch = map[string]provider.Fetch{"gopay": {Get: fetch, Pointer: always}}
		c.IDOnly = map[string]bool{"gopay": true}
		c.Metrics = metrics.New(&emitted, "test")
	})
	sent := &sentMessages{}
	in := intake.New(intake.Config{Now: f.now}, f.store, sent, nil)
	ctx := context.Background()
	notify := func(want intake.Outcome) {
		t.Helper()
		evs, err := verifytest.Verifier(gopay.Provider{}, nil).Verify(ctx, webhook.Request{Method: "GET", Query: map[string]string{"id": "3000000001"}})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := in.Accept(ctx, evs[0]); err != nil || got != want {
			t.Fatalf("notification at %v: %v, %v; want %v", f.now(), got, err, want)
		}
	}
	const key = webhook.Key("gopay#3000000001")
	body := queue.Envelope{Key: key, Type: gopay.Notification}.Marshal()
	handle := func(receives int) events.SQSEventResponse {
		t.Helper()
		resp, err := f.h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{message("gopay", body, receives)}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	get := func() inbox.Item {
		t.Helper()
		it, err := f.store.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return it
	}

	notify(intake.Accepted)
	if resp := handle(1); len(resp.BatchItemFailures) != 1 {
		t.Fatalf("first not found: %+v, want the message back for a retry", resp)
	}
	if it := get(); it.Status != inbox.Failed || f.q.delays["rh-gopay"] <= 0 {
		t.Fatalf("after the first not found: %s, delay %v; want FAILED with a backoff", it.Status, f.q.delays["rh-gopay"])
	}
	f.clock = t0.Add(10 * time.Second)
	if resp := handle(2); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("second not found: %+v, want acknowledged", resp)
	}
	it := get()
	if it.Status != inbox.Ignored || it.Outcome != "not found at gopay" || !it.RenewAfter.Equal(f.clock.Add(processor.DefaultNotFoundWindow)) {
		t.Fatalf("after the second not found: %+v; want IGNORED \"not found at gopay\" until %v", it, f.clock.Add(processor.DefaultNotFoundWindow))
	}
	if len(f.q.parked) != 0 {
		t.Fatalf("parked %+v, want nothing (an invented id must not raise the DLQ alarm)", f.q.parked)
	}
	lines, err := emf.ReadLines(&emitted)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]float64{metrics.Failed: 0, metrics.Parked: 0, metrics.Ignored: 1} {
		if got := emf.Sum(lines, name, nil, time.Time{}); got != want {
			t.Errorf("metric %s = %v, want %v (no alarm counts a made-up id)", name, got, want)
		}
	}

	until := it.RenewAfter
	for _, at := range []time.Time{f.clock, until.Add(-time.Second), until.Add(-time.Millisecond)} {
		f.clock = at
		for range 20 {
			notify(intake.Duplicate)
		}
	}
	if n := sent.count(); n != 1 || fetches != 2 {
		t.Fatalf("within the window: %d messages sent, %d fetches; want 1 and 2", n, fetches)
	}
	f.clock = until
	notify(intake.Accepted)
	if n := sent.count(); n != 2 {
		t.Fatalf("after the window: %d messages sent, want 2 (claimed again)", n)
	}
}

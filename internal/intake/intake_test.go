package intake_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// store is the inbox under test with faults a test can switch on: each
// function field, when set, runs instead of the real call.
type store struct {
	inbox.Store
	putPayload   func(ctx context.Context, it inbox.Item, raw []byte) error
	markEnqueued func(ctx context.Context, key webhook.Key, cutoff, now time.Time, statuses ...inbox.Status) (inbox.Item, error)
	claim        func(ctx context.Context, c inbox.Claim) (inbox.Item, error)
}

func (s *store) PutPayload(ctx context.Context, it inbox.Item, raw []byte) error {
	if s.putPayload != nil {
		return s.putPayload(ctx, it, raw)
	}
	return s.Store.PutPayload(ctx, it, raw)
}

func (s *store) MarkEnqueued(ctx context.Context, key webhook.Key, cutoff, now time.Time, statuses ...inbox.Status) (inbox.Item, error) {
	if s.markEnqueued != nil {
		return s.markEnqueued(ctx, key, cutoff, now, statuses...)
	}
	return s.Store.MarkEnqueued(ctx, key, cutoff, now, statuses...)
}

func (s *store) Claim(ctx context.Context, c inbox.Claim) (inbox.Item, error) {
	if s.claim != nil {
		return s.claim(ctx, c)
	}
	return s.Store.Claim(ctx, c)
}

// recorder records every envelope sent, and what the inbox held for it
// at the moment it was sent.
type recorder struct {
	store inbox.Store
	mu    sync.Mutex
	sent  []queue.Envelope
	// seen is, per send, whether the claim and the payload were stored.
	seen []string
	fail bool
	// during, when set, runs at each Send before it fails (a delivery
	// racing the failing one).
	during func()
	next   interface {
		Send(context.Context, queue.Envelope) error
	}
}

func (r *recorder) Send(ctx context.Context, env queue.Envelope) error {
	if r.during != nil && r.fail {
		r.during()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail {
		return errors.New("sqs: ServiceUnavailable")
	}
	state := "claim+payload"
	if _, err := r.store.Get(ctx, env.Key); err != nil {
		state = "no claim"
	} else if _, err := r.store.Payload(ctx, env.Key); err != nil {
		state = "no payload"
	}
	r.seen = append(r.seen, state)
	r.sent = append(r.sent, env)
	if r.next != nil {
		return r.next.Send(ctx, env)
	}
	return nil
}

// backends runs fn on the memory store and on dynalite with the real
// events queue on local-aws-sqs.
func backends(t *testing.T, fn func(t *testing.T, s inbox.Store, q *recorder)) {
	t.Run("memory", func(t *testing.T) {
		s := inboxtest.NewMemory()
		fn(t, s, &recorder{store: s})
	})
	t.Run("dynalite", func(t *testing.T) {
		emu := devstacktest.ForTest(t)
		st := devstacktest.NewTestStack(t)
		s := inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"]).WithBodies(inbox.NewBodies(emu.S3(), st.Buckets["BodyBucket"]))
		fn(t, s, &recorder{store: s, next: queue.New(emu.SQS(), st.Queues["EventsQueue"].URL)})
	})
}

func TestOutcomeNames(t *testing.T) {
	for o, want := range map[intake.Outcome]string{intake.Accepted: "accepted", intake.Duplicate: "duplicate", 0: "Outcome(0)"} {
		if got := o.String(); got != want {
			t.Errorf("Outcome(%d).String() = %q, want %q", int(o), got, want)
		}
	}
}

func TestNewEventIsSentOnlyAfterClaimAndPayload(t *testing.T) {
	for _, ev := range []webhook.Event{inboxtest.Event("evt_order"), inboxtest.LargeEvent("evt_orderlarge"), inboxtest.HugeEvent("evt_orderhuge")} {
		backends(t, func(t *testing.T, s inbox.Store, q *recorder) {
			ctx := context.Background()
			in := intake.New(intake.Config{Now: func() time.Time { return now }}, s, q, nil)
			for i, want := range []intake.Outcome{intake.Accepted, intake.Duplicate} {
				got, err := in.Accept(ctx, ev)
				if err != nil || got != want {
					t.Fatalf("Accept %d = %v, %v; want %v", i+1, got, err, want)
				}
			}
			if want := []string{"claim+payload"}; !slices.Equal(q.seen, want) {
				t.Errorf("inbox state at each send = %q, want %q", q.seen, want)
			}
			if p, err := s.Payload(ctx, ev.Key()); err != nil || string(p) != string(ev.Raw) {
				t.Errorf("payload = %q, %v", p, err)
			}
		})
	}
}

func TestSmallPayloadRidesInTheClaim(t *testing.T) {
	// A small event is one write: the claim carries its payload, so
	// neither the new event nor its duplicate writes a payload item, nor
	// does a failed send.
	backends(t, func(t *testing.T, real inbox.Store, q *recorder) {
		ctx := context.Background()
		puts := 0
		s := &store{Store: real}
		s.putPayload = func(ctx context.Context, it inbox.Item, raw []byte) error {
			puts++
			return real.PutPayload(ctx, it, raw)
		}
		in := intake.New(intake.Config{Now: func() time.Time { return now }}, s, q, nil)
		ev := inboxtest.Event("evt_small")
		for i, want := range []intake.Outcome{intake.Accepted, intake.Duplicate, intake.Duplicate} {
			if got, err := in.Accept(ctx, ev); err != nil || got != want {
				t.Fatalf("Accept %d = %v, %v; want %v", i+1, got, err, want)
			}
		}
		if puts != 0 {
			t.Errorf("%d payload writes for a small event and its duplicates, want 0", puts)
		}
		if it, err := real.Get(ctx, ev.Key()); err != nil || string(it.Payload) != string(ev.Raw) {
			t.Errorf("claim = %+v, %v; want it to carry the payload", it, err)
		}

		acceptFailingSend(ctx, t, in, real, q, "evt_smallnosend")
		if puts != 0 {
			t.Errorf("%d payload writes, want 0", puts)
		}
	})
}

func TestSmallDuplicateStoresThePayloadASeparateClaimLost(t *testing.T) {
	// The stored claim keeps its payload apart (a larger body, or an
	// earlier version of hookinbox) and lost it; a later delivery whose
	// bytes would ride inline still stores them for it.
	backends(t, func(t *testing.T, real inbox.Store, q *recorder) {
		ctx := context.Background()
		s := &store{Store: real}
		s.putPayload = func(context.Context, inbox.Item, []byte) error { return errors.New("dynamodb: throttled") }
		in := intake.New(intake.Config{Now: func() time.Time { return now }}, s, q, nil)
		first := inboxtest.LargeEvent("evt_mixed")
		if _, err := in.Accept(ctx, first); err == nil {
			t.Fatal("Accept with the payload write failing: no error, want one")
		}
		s.putPayload = nil
		again := inboxtest.Event("evt_mixed")
		if got, err := in.Accept(ctx, again); err != nil || got != intake.Duplicate {
			t.Fatalf("small retry = %v, %v; want duplicate", got, err)
		}
		if p, err := real.Payload(ctx, again.Key()); err != nil || string(p) != string(again.Raw) {
			t.Errorf("payload after the retry = %q, %v; want the retry's bytes", p, err)
		}
	})
}

func TestClaimAndPayloadAreWrittenTogether(t *testing.T) {
	// The claim waits until the payload write has started: with a claim
	// then a payload write in sequence this would never finish.
	mem := inboxtest.NewMemory()
	started := make(chan struct{})
	s := &store{Store: mem}
	s.putPayload = func(ctx context.Context, it inbox.Item, raw []byte) error {
		close(started)
		return mem.PutPayload(ctx, it, raw)
	}
	s.claim = func(ctx context.Context, c inbox.Claim) (inbox.Item, error) {
		select {
		case <-started:
		case <-ctx.Done():
			return inbox.Item{}, ctx.Err()
		}
		return mem.Claim(ctx, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in := intake.New(intake.Config{}, s, &recorder{store: mem}, nil)
	if got, err := in.Accept(ctx, inboxtest.LargeEvent("evt_together")); err != nil || got != intake.Accepted {
		t.Fatalf("Accept = %v, %v; want accepted (the claim waited for a payload write that never began)", got, err)
	}
}

func TestLostPayloadIsStoredByTheNextDelivery(t *testing.T) {
	// Claim ok, payload write fails, and the function dies before it can
	// mark the claim unsent. The next delivery within the grace period
	// is a duplicate: it stores the payload; past the grace period, a
	// delivery sends the claim on.
	backends(t, func(t *testing.T, real inbox.Store, q *recorder) {
		ctx := context.Background()
		clock := now
		s := &store{Store: real}
		s.putPayload = func(context.Context, inbox.Item, []byte) error { return errors.New("dynamodb: throttled") }
		s.markEnqueued = func(context.Context, webhook.Key, time.Time, time.Time, ...inbox.Status) (inbox.Item, error) {
			return inbox.Item{}, errors.New("dynamodb: throttled")
		}
		in := intake.New(intake.Config{Now: func() time.Time { return clock }}, s, q, nil)
		ev := inboxtest.LargeEvent("evt_lostpayload")
		if _, err := in.Accept(ctx, ev); err == nil {
			t.Fatal("Accept with the payload write failing: no error, want one (the provider must retry)")
		}
		if _, err := real.Get(ctx, ev.Key()); err != nil {
			t.Fatalf("claim after a failed payload write: %v, want it kept in RECEIVED", err)
		}
		if _, err := real.Payload(ctx, ev.Key()); !errors.Is(err, inbox.ErrNotFound) {
			t.Fatalf("payload: %v, want none yet", err)
		}
		s.putPayload, s.markEnqueued = nil, nil

		clock = now.Add(30 * time.Second) // within the grace period
		if got, err := in.Accept(ctx, ev); err != nil || got != intake.Duplicate {
			t.Fatalf("retry = %v, %v; want duplicate", got, err)
		}
		if p, err := real.Payload(ctx, ev.Key()); err != nil || string(p) != string(ev.Raw) {
			t.Errorf("payload after the retry = %q, %v; want the event's bytes", p, err)
		}
		if len(q.sent) != 0 {
			t.Errorf("sent %v within the grace period, want nothing", q.sent)
		}
		clock = now.Add(intake.DefaultGrace + time.Second) // past it: re-enqueued
		if got, err := in.Accept(ctx, ev); err != nil || got != intake.Duplicate {
			t.Fatalf("retry past grace = %v, %v; want duplicate", got, err)
		}
		if want := []string{"claim+payload"}; !slices.Equal(q.seen, want) {
			t.Errorf("inbox state at each send = %q, want %q", q.seen, want)
		}
	})
}

func TestFailedPayloadOrSendKeepsTheClaim(t *testing.T) {
	backends(t, func(t *testing.T, real inbox.Store, q *recorder) {
		ctx := context.Background()
		s := &store{Store: real}
		in := intake.New(intake.Config{Now: func() time.Time { return now }}, s, q, nil)

		s.putPayload = func(context.Context, inbox.Item, []byte) error { return errors.New("dynamodb: throttled") }
		ev := inboxtest.LargeEvent("evt_nopayload")
		if _, err := in.Accept(ctx, ev); err == nil {
			t.Error("payload write failed: no error")
		}
		if it, err := real.Get(ctx, ev.Key()); err != nil || it.Status != inbox.Received {
			t.Errorf("claim after a failed payload write: %v, %v; want it kept in RECEIVED", it.Status, err)
		}
		s.putPayload = nil
		if got, err := in.Accept(ctx, ev); err != nil || got != intake.Duplicate {
			t.Errorf("the provider's retry = %v, %v; want duplicate", got, err)
		}

		ev = acceptFailingSend(ctx, t, in, real, q, "evt_nosend")
		if got, err := in.Accept(ctx, ev); err != nil || got != intake.Duplicate {
			t.Errorf("the provider's retry = %v, %v; want duplicate", got, err)
		}
		if want := []string{"claim+payload", "claim+payload"}; !slices.Equal(q.seen, want) {
			t.Errorf("sent %v (inbox %q), want each event once, with its payload", q.sent, q.seen)
		}
	})
}

// TestHugeBodyIsWrittenAgainWhileUnfinished: a body kept in S3 is written
// after the claim is won, and again (the same object: its name is its
// hash) by every delivery of the same bytes while the event is
// unfinished, since the claim's own write may have died with its
// function; never by a delivery of other bytes, or of a finished event.
// A failed write keeps the claim.
func TestHugeBodyIsWrittenAgainWhileUnfinished(t *testing.T) {
	backends(t, func(t *testing.T, real inbox.Store, q *recorder) {
		ctx := context.Background()
		var calls []string
		s := &store{Store: real}
		s.claim = func(ctx context.Context, c inbox.Claim) (inbox.Item, error) {
			calls = append(calls, "claim")
			return real.Claim(ctx, c)
		}
		s.putPayload = func(ctx context.Context, it inbox.Item, raw []byte) error {
			calls = append(calls, "put")
			return real.PutPayload(ctx, it, raw)
		}
		clock := now
		in := intake.New(intake.Config{Now: func() time.Time { return clock }}, s, q, nil)
		ev := inboxtest.HugeEvent("evt_huge")
		other := ev
		other.Raw = append([]byte(nil), ev.Raw...)
		other.Raw[len(other.Raw)-3] = 'y'
		accept := func(ev webhook.Event, want intake.Outcome, wantCalls ...string) {
			t.Helper()
			calls = nil
			if got, err := in.Accept(ctx, ev); err != nil || got != want {
				t.Fatalf("Accept = %v, %v; want %v", got, err, want)
			}
			if !slices.Equal(calls, wantCalls) {
				t.Errorf("calls %q, want %q", calls, wantCalls)
			}
		}
		accept(ev, intake.Accepted, "claim", "put")
		accept(ev, intake.Duplicate, "claim", "put")
		accept(other, intake.Duplicate, "claim")
		// The claim waited past the grace period (its function died): the
		// next delivery stores the body again before it sends.
		clock = now.Add(intake.DefaultGrace + time.Second)
		accept(ev, intake.Duplicate, "claim", "put")
		if len(q.sent) != 2 || q.seen[1] != "claim+payload" {
			t.Errorf("sends %v (%q); want a second send, with the body stored", q.sent, q.seen)
		}
		if _, err := real.Lease(ctx, ev.Key(), "w", clock, time.Minute); err != nil {
			t.Fatal(err)
		}
		accept(ev, intake.Duplicate, "claim", "put") // PROCESSING: unfinished
		if _, err := real.Finish(ctx, ev.Key(), "w", inbox.Result{Status: inbox.Done, At: clock}); err != nil {
			t.Fatal(err)
		}
		accept(ev, intake.Duplicate, "claim")

		s.putPayload = func(context.Context, inbox.Item, []byte) error { return errors.New("s3: SlowDown") }
		nobody := inboxtest.HugeEvent("evt_huge_nobody")
		if _, err := in.Accept(ctx, nobody); err == nil {
			t.Error("body write failed: no error")
		}
		if _, err := real.Get(ctx, nobody.Key()); err != nil {
			t.Errorf("claim after a failed body write: %v, want it kept", err)
		}
	})
}

// TestLargeBodyIsNeverLostToAFault: the receiver's writes of a new event
// kept in S3 are claim, PutObject, SendMessage, and on a failure the
// mark that the claim is unsent. Whichever fails, or dies with the
// function from there on, the delivery is answered with an error, and the
// provider's next delivery, within the grace period, is answered only
// once the body is stored: the provider stops there, and the reconciler
// (played by a delivery past the grace period) or the processor's next
// attempt finds the body. So it is too when the reconciler had already
// sent the claim on, and the processor found no body (FAILED).
func TestLargeBodyIsNeverLostToAFault(t *testing.T) {
	errDown := errors.New("down")
	for _, tc := range []struct {
		name string
		fail []string // the calls that fail
	}{
		{"claim fails", []string{"claim"}},
		{"dies during PutObject", []string{"put", "mark"}},
		{"PutObject fails, marked unsent", []string{"put"}},
		{"SendMessage fails, marked unsent", []string{"send"}},
		{"dies during SendMessage", []string{"send", "mark"}},
	} {
		for _, processed := range []bool{false, true} {
			name := tc.name
			if processed {
				name += ", processed without it"
			}
			t.Run(name, func(t *testing.T) {
				backends(t, func(t *testing.T, real inbox.Store, q *recorder) {
					ctx := context.Background()
					failing := tc.fail
					fails := func(call string) bool { return slices.Contains(failing, call) }
					s := &store{Store: real}
					s.claim = func(ctx context.Context, c inbox.Claim) (inbox.Item, error) {
						if fails("claim") {
							return inbox.Item{}, errDown
						}
						return real.Claim(ctx, c)
					}
					s.putPayload = func(ctx context.Context, it inbox.Item, raw []byte) error {
						if fails("put") {
							return errDown
						}
						return real.PutPayload(ctx, it, raw)
					}
					s.markEnqueued = func(ctx context.Context, key webhook.Key, cutoff, now time.Time, statuses ...inbox.Status) (inbox.Item, error) {
						if fails("mark") {
							return inbox.Item{}, errDown
						}
						return real.MarkEnqueued(ctx, key, cutoff, now, statuses...)
					}
					clock := now
					in := intake.New(intake.Config{Now: func() time.Time { return clock }}, s, q, nil)
					ev := inboxtest.HugeEvent("evt_fault")
					q.fail = fails("send")
					if _, err := in.Accept(ctx, ev); err == nil {
						t.Fatal("Accept under the fault: no error; want one, so the provider delivers again")
					}
					q.fail, failing = false, nil
					if processed {
						processWithoutBody(ctx, t, real, ev.Key())
					}
					clock = now.Add(30 * time.Second)
					if _, err := in.Accept(ctx, ev); err != nil {
						t.Fatalf("the provider's next delivery: %v", err)
					}
					if raw, err := real.Payload(ctx, ev.Key()); err != nil || string(raw) != string(ev.Raw) {
						t.Fatalf("payload once the next delivery is answered = %d bytes, %v; want the event's %d", len(raw), err, len(ev.Raw))
					}
					clock = now.Add(intake.DefaultGrace + time.Minute)
					if _, err := in.Accept(ctx, ev); err != nil {
						t.Fatalf("a delivery past the grace period: %v", err)
					}
					if slices.ContainsFunc(q.seen, func(s string) bool { return s != "claim+payload" }) || len(q.sent) == 0 && !processed {
						t.Errorf("sends %v, the inbox at each %q; want each with claim and body stored, and one at least unless the processor has it", q.sent, q.seen)
					}
				})
			})
		}
	}
}

// processWithoutBody plays the reconciler sending on a claim whose body
// is missing, and the processor's attempt failing for want of it; a
// claim released, or with its body, is left alone.
func processWithoutBody(ctx context.Context, t *testing.T, s inbox.Store, key webhook.Key) {
	t.Helper()
	if _, err := s.Payload(ctx, key); !errors.Is(err, inbox.ErrNotFound) || errors.Is(getErr(ctx, s, key), inbox.ErrNotFound) {
		return
	}
	if _, err := s.Lease(ctx, key, "w", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(ctx, key, "w", inbox.Result{Status: inbox.Failed, Error: "load payload: none stored", At: now}); err != nil {
		t.Fatal(err)
	}
}

func TestDuplicatePayloadFailureMattersOnlyWhileUnfinished(t *testing.T) {
	ctx := context.Background()
	mem := inboxtest.NewMemory()
	s := &store{Store: mem}
	in := intake.New(intake.Config{Now: func() time.Time { return now }}, s, &recorder{store: mem}, nil)
	ev := inboxtest.LargeEvent("evt_dupfail")
	if _, err := in.Accept(ctx, ev); err != nil {
		t.Fatal(err)
	}
	s.putPayload = func(context.Context, inbox.Item, []byte) error { return errors.New("dynamodb: throttled") }
	if _, err := in.Accept(ctx, ev); err == nil {
		t.Error("duplicate of a RECEIVED event whose payload write failed: no error, want one so the provider retries")
	}
	if _, err := mem.Lease(ctx, ev.Key(), "w", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Finish(ctx, ev.Key(), "w", inbox.Result{Status: inbox.Done, At: now}); err != nil {
		t.Fatal(err)
	}
	if got, err := in.Accept(ctx, ev); err != nil || got != intake.Duplicate {
		t.Errorf("duplicate of a DONE event whose payload write failed = %v, %v; want duplicate", got, err)
	}
}

// acceptFailingSend accepts the new small event id while the queue
// fails, checks that the error reaches the caller and that the claim is
// kept with its payload, and returns the event.
func acceptFailingSend(ctx context.Context, t *testing.T, in *intake.Intake, s inbox.Store, q *recorder, id string) webhook.Event {
	t.Helper()
	q.fail = true
	defer func() { q.fail = false }()
	ev := inboxtest.Event(id)
	if _, err := in.Accept(ctx, ev); err == nil {
		t.Error("send failed: no error")
	}
	for what, err := range map[string]error{"claim": getErr(ctx, s, ev.Key()), "payload": payloadErr(ctx, s, ev.Key())} {
		if err != nil {
			t.Errorf("%s after a failed send: %v, want it kept", what, err)
		}
	}
	return ev
}

func getErr(ctx context.Context, s inbox.Store, key webhook.Key) error {
	_, err := s.Get(ctx, key)
	return err
}

func payloadErr(ctx context.Context, s inbox.Store, key webhook.Key) error {
	_, err := s.Payload(ctx, key)
	return err
}

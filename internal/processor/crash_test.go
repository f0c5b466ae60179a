package processor_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestLiveLeaseComesBackWhenTheLeaseEnds(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_held", "checkout.session.completed")
	// Another worker leased it 10 s ago, for the default 45 s.
	if _, err := f.store.Lease(context.Background(), "stripe#evt_held", "other", t0.Add(-10*time.Second), processor.DefaultLeaseFor); err != nil {
		t.Fatal(err)
	}
	resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if diff := cmp.Diff([]string{"m-evt_held"}, failedIDs(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	// 35 s of lease left plus half of the 2 s jitter: back in 36 s, not
	// after the queue's visibility timeout, and not at once.
	if d := f.q.delays["rh-evt_held"]; d != 36*time.Second {
		t.Errorf("visibility = %v, want 36s (the lease's end plus jitter)", d)
	}
	if it := f.status(t, "evt_held"); it.LeaseOwner != "other" || it.Attempts != 1 {
		t.Errorf("item: owner %q attempts %d, want the holder's lease untouched", it.LeaseOwner, it.Attempts)
	}
}

func TestCopyWaitsForItsTwinAndIsAcked(t *testing.T) {
	f := newFixture(t, func(c *processor.Config) { c.HeldWait = 10 * time.Second })
	f.biz.inEffect, f.biz.release = make(chan struct{}), make(chan struct{})
	msg := f.claim(t, "evt_twin", "checkout.session.completed")
	copyMsg := msg
	copyMsg.MessageId, copyMsg.ReceiptHandle = "m-evt_twin-copy", "rh-evt_twin-copy"
	var wg sync.WaitGroup
	var first events.SQSEventResponse
	wg.Add(1)
	go func() {
		defer wg.Done()
		first, _ = f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	}()
	<-f.biz.inEffect // the twin holds the lease, inside its first effect
	waiting := make(chan struct{})
	var once sync.Once
	copyHandler := processor.New(processor.Config{Now: f.now, Jitter: func() float64 { return 0.5 }, HeldWait: 10 * time.Second},
		watchedStore{Memory: f.store, onGet: func() { once.Do(func() { close(waiting) }) }}, f.ledger, f.biz, f.q, f.q, nil)
	done := make(chan events.SQSEventResponse)
	go func() {
		second, _ := copyHandler.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{copyMsg}})
		done <- second
	}()
	<-waiting // the copy met the lease and waits for its twin
	close(f.biz.inEffect)
	f.biz.inEffect = nil // the twin's next effect runs freely (written before the release, read after)
	f.biz.release <- struct{}{}
	second := <-done
	wg.Wait()
	if len(first.BatchItemFailures)+len(second.BatchItemFailures) != 0 {
		t.Errorf("failures: twin %v, copy %v; want both acknowledged", failedIDs(first), failedIDs(second))
	}
	if len(f.q.delays) != 0 || len(f.q.resent) != 0 {
		t.Errorf("delays %v resent %v: the copy must not wait for the lease to end", f.q.delays, f.q.resent)
	}
	if it := f.status(t, "evt_twin"); it.Status != inbox.Done || it.Attempts != 1 {
		t.Errorf("item: status %s attempts %d, want DONE after 1 attempt", it.Status, it.Attempts)
	}
}

func TestCopyOnItsLastReceiveIsSentAgainNotLeftToSQS(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_last", "checkout.session.completed")
	if _, err := f.store.Lease(context.Background(), "stripe#evt_last", "other", t0, processor.DefaultLeaseFor); err != nil {
		t.Fatal(err)
	}
	msg.Attributes["ApproximateReceiveCount"] = "5" // maxReceiveCount: returned, SQS would move it to the DLQ
	resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures %v, want this copy acknowledged", failedIDs(resp))
	}
	want := []resent{{Key: "stripe#evt_last", After: 46 * time.Second}}
	if diff := cmp.Diff(want, f.q.resent); diff != "" {
		t.Errorf("sent again (-want +got):\n%s", diff)
	}
	if len(f.q.parked) != 0 {
		t.Errorf("parked %v, want nothing", f.q.parked)
	}
}

func TestCopyFindsTheHolderFailedAndBacksOff(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_hfail", "checkout.session.completed")
	ctx := context.Background()
	if _, err := f.store.Lease(ctx, "stripe#evt_hfail", "other", t0, processor.DefaultLeaseFor); err != nil {
		t.Fatal(err)
	}
	// The holder fails the event while the copy waits for it.
	var once sync.Once
	waiting := watchedStore{Memory: f.store, onGet: func() {
		once.Do(func() {
			_, _ = f.store.Finish(ctx, "stripe#evt_hfail", "other", inbox.Result{Status: inbox.Failed, Error: "ses: throttled", At: t0})
		})
	}}
	f.h = processor.New(processor.Config{Now: f.now, Jitter: func() float64 { return 0.5 }, HeldWait: 5 * time.Second}, waiting, f.ledger, f.biz, f.q, f.q, nil)
	resp, _ := f.h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 1 || f.q.delays["rh-evt_hfail"] != 5*time.Second {
		t.Errorf("failures %v, delay %v; want the copy back after the first backoff (5s)", failedIDs(resp), f.q.delays["rh-evt_hfail"])
	}
	if it := f.status(t, "evt_hfail"); it.Attempts != 1 || len(f.biz.Runs()) != 0 {
		t.Errorf("attempts %d runs %v: the copy must not run the event before its backoff", it.Attempts, f.biz.Runs())
	}
}

func TestPanicFailsOnlyItsEvent(t *testing.T) {
	f := newFixture(t)
	var batch events.SQSEvent
	for _, id := range []string{"evt_ok1", "evt_boom", "evt_ok2"} {
		batch.Records = append(batch.Records, f.claim(t, id, "checkout.session.completed"))
	}
	f.biz.panics["evt_boom"] = "runtime error: index out of range [3] with length 3 (buyer boom@example.com)"
	var logs bytes.Buffer
	f.h = processor.New(processor.Config{Now: f.now, Jitter: func() float64 { return 0.5 }}, f.store, f.ledger, f.biz, f.q, f.q,
		slog.New(slog.NewJSONHandler(&logs, nil)))
	resp, err := f.h.Handle(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"m-evt_boom"}, failedIDs(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	it := f.status(t, "evt_boom")
	if it.Status != inbox.Failed || !strings.Contains(it.LastError, "panic") || !strings.Contains(it.LastError, "index out of range [3]") {
		t.Errorf("panicking event: status %s last_error %q; want FAILED with the panic text", it.Status, it.LastError)
	}
	if strings.Contains(it.LastError, "boom@example.com") || strings.Contains(logs.String(), "boom@example.com") {
		t.Errorf("the address in the panic text reached last_error %q or the log", it.LastError)
	}
	if !strings.Contains(logs.String(), "business code panicked") || !strings.Contains(logs.String(), `"stack"`) {
		t.Errorf("no ERROR line with the panic and its stack in the log:\n%s", logs.String())
	}
	for _, id := range []string{"evt_ok1", "evt_ok2"} {
		if got := f.status(t, id).Status; got != inbox.Done {
			t.Errorf("%s: status %s, want DONE", id, got)
		}
	}
}

func TestDeadlineBudget(t *testing.T) {
	f := newFixture(t, func(c *processor.Config) {
		c.Budget, c.Reserve, c.Concurrency = time.Second, 300*time.Millisecond, 1
	})
	var batch events.SQSEvent
	for _, id := range []string{"evt_hang", "evt_late1", "evt_late2"} {
		batch.Records = append(batch.Records, f.claim(t, id, "checkout.session.completed"))
	}
	f.biz.hang["evt_hang"] = true // its effect call never answers
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := f.h.Handle(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("Handle returned after the invocation's deadline")
	}
	if diff := cmp.Diff([]string{"m-evt_hang", "m-evt_late1", "m-evt_late2"}, failedIDs(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	// The hanging effect got a deadline inside the invocation: FAILED, with
	// its backoff, and the outcome written.
	if it := f.status(t, "evt_hang"); it.Status != inbox.Failed || !strings.Contains(it.LastError, "deadline exceeded") {
		t.Errorf("evt_hang: status %s last_error %q, want FAILED by its deadline", it.Status, it.LastError)
	}
	if d := f.q.delays["rh-evt_hang"]; d != 5*time.Second {
		t.Errorf("evt_hang backoff = %v, want 5s", d)
	}
	// The others were not started: untouched, back in a couple of seconds.
	for _, id := range []string{"evt_late1", "evt_late2"} {
		if it := f.status(t, id); it.Status != inbox.Received || it.Attempts != 0 {
			t.Errorf("%s: status %s attempts %d, want RECEIVED and not attempted", id, it.Status, it.Attempts)
		}
		if d := f.q.delays["rh-"+id]; d != 2*time.Second {
			t.Errorf("%s: visibility %v, want 2s (1 s and half of it as jitter, rounded up)", id, d)
		}
	}
}

func TestMissingPayloadIsFetchedFromTheProvider(t *testing.T) {
	tests := []struct {
		name       string
		fetchers   map[string]processor.Fetcher
		wantStatus inbox.Status
		wantStored bool
	}{
		{"fetched and stored", map[string]processor.Fetcher{"stripe": func(_ context.Context, id string) ([]byte, error) {
			return []byte(`{"id":"` + id + `","object":"event"}`), nil
		}}, inbox.Done, true},
		{"the provider does not know it", map[string]processor.Fetcher{"stripe": func(_ context.Context, id string) ([]byte, error) {
			return nil, webhook.Permanent(errors.New("stripe has no event " + id))
		}}, inbox.Dead, false},
		{"the provider is down", map[string]processor.Fetcher{"stripe": func(_ context.Context, id string) ([]byte, error) {
			return nil, errors.New("stripe: 503")
		}}, inbox.Failed, false},
		{"no fetcher for the provider", nil, inbox.Failed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(c *processor.Config) { c.Fetchers = tt.fetchers })
			// A payload too large to ride in its claim, whose own write was lost.
			ev := webhook.Event{Provider: "stripe", ID: "evt_nopayload", Type: "checkout.session.completed", Created: t0,
				Raw: []byte(`{"padding":"` + strings.Repeat("x", inbox.InlineMaxRaw) + `"}`)}
			if _, err := f.store.Claim(context.Background(), inbox.Claim{Event: ev, At: t0, TTL: time.Hour}); err != nil {
				t.Fatal(err)
			}
			msg := message("nopayload", webhook.Envelope{Key: ev.Key(), Type: ev.Type}.Marshal(), 1)
			_, _ = f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
			if it := f.status(t, "evt_nopayload"); it.Status != tt.wantStatus {
				t.Errorf("status %s (%s), want %s", it.Status, it.LastError, tt.wantStatus)
			}
			raw, err := f.store.Payload(context.Background(), ev.Key())
			if stored := err == nil && strings.Contains(string(raw), "evt_nopayload"); stored != tt.wantStored {
				t.Errorf("payload stored = %v (%s, %v), want %v", stored, raw, err, tt.wantStored)
			}
		})
	}
}

// deadlineLedger is the in-memory ledger with DynamoDB's manners: a
// record written with an ended context fails.
type deadlineLedger struct{ *effects.MemoryLedger }

func (l deadlineLedger) For(key webhook.Key) effects.Runner {
	return deadlineRunner{l.MemoryLedger.For(key)}
}

type deadlineRunner struct{ effects.Runner }

func (r deadlineRunner) Do(ctx context.Context, name string, fn func(context.Context, string) error) error {
	if err := r.Runner.Do(ctx, name, fn); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("record effect %s: %w", name, err)
	}
	return nil
}

// TestEffectDoneAtItsDeadlineIsRecorded: an outside call that answers just
// as the effect's deadline comes must still be recorded in the ledger, or
// the retry would repeat it (an email sent twice): the ledger and the
// outcome get time after the effects' deadline.
func TestEffectDoneAtItsDeadlineIsRecorded(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_lastsecond", "checkout.session.completed")
	var effectDeadline time.Time
	slow := processor.New(processor.Config{Now: f.now, Budget: time.Second, Reserve: 400 * time.Millisecond}, f.store,
		deadlineLedger{f.ledger}, businessFunc(func(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
			return fx.Do(ctx, "welcome-email", func(ctx context.Context, _ string) error {
				effectDeadline, _ = ctx.Deadline()
				<-ctx.Done() // the call answers as its deadline comes: sent
				return nil
			})
		}), f.q, f.q, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	invocationDeadline, _ := ctx.Deadline()
	resp, _ := slow.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg}})
	if got := invocationDeadline.Sub(effectDeadline); got != 400*time.Millisecond {
		t.Errorf("the effect's deadline is %v before the invocation's, want OUTCOME_RESERVE (400ms)", got)
	}
	if it := f.status(t, "evt_lastsecond"); it.Status != inbox.Done || len(resp.BatchItemFailures) != 0 {
		t.Errorf("status %s (%s), failures %v; want DONE, the effect recorded", it.Status, it.LastError, failedIDs(resp))
	}
}

type businessFunc func(ctx context.Context, ev webhook.Event, fx effects.Runner) error

func (b businessFunc) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	return b(ctx, ev, fx)
}

// watchedStore is the in-memory store that calls onGet before each Get: a
// copy waiting for a lease holder reads the event with Get.
type watchedStore struct {
	*inbox.Memory
	onGet func()
}

func (s watchedStore) Get(ctx context.Context, key webhook.Key) (inbox.Item, error) {
	s.onGet()
	return s.Memory.Get(ctx, key)
}

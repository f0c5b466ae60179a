package processor_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestBatchReportsOnlyTheFailingMessage(t *testing.T) {
	f := newFixture(t)
	var batch events.SQSEvent
	for i := 1; i <= 5; i++ {
		batch.Records = append(batch.Records, f.claim(t, fmt.Sprintf("evt_%d", i), "checkout.session.completed"))
	}
	f.biz.failing["evt_3/second"] = errors.New("ses: throttled")
	resp, err := f.h.Handle(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"m-evt_3"}, failedIDs(resp)); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	for i := 1; i <= 5; i++ {
		want := inbox.Done
		if i == 3 {
			want = inbox.Failed
		}
		if got := f.status(t, fmt.Sprintf("evt_%d", i)).Status; got != want {
			t.Errorf("evt_%d status = %s, want %s", i, got, want)
		}
	}
	if got := f.status(t, "evt_3").LastError; got == "" {
		t.Error("FAILED item has no last_error")
	}
	if d, ok := f.q.delays["rh-evt_3"]; !ok || d != 5*time.Second {
		t.Errorf("backoff of the failed message = %v (set %v), want 5s (half of the 10 s first ceiling)", d, ok)
	}
}

func TestRetryAfterPartialFailureDoesNotRepeatEffects(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_partial", "checkout.session.completed")
	f.biz.failing["evt_partial/second"] = errors.New("stripe: 503")
	resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 1 {
		t.Fatalf("first attempt: failures %v, want the message back", failedIDs(resp))
	}
	delete(f.biz.failing, "evt_partial/second")
	f.clock = f.clock.Add(time.Minute)
	msg.Attributes["ApproximateReceiveCount"] = "2"
	resp, _ = f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("retry: failures %v, want none", failedIDs(resp))
	}
	want := []string{
		"evt_partial/first/hookinbox:stripe#evt_partial:first",
		"evt_partial/second/hookinbox:stripe#evt_partial:second",
	}
	if diff := cmp.Diff(want, f.biz.Runs()); diff != "" {
		t.Errorf("effects run (-want +got):\n%s", diff)
	}
	f.wantStatus(t, "evt_partial", inbox.Done, 2)
}

func TestSameMessageTwiceAtOnceRunsEffectsOnce(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_twice", "checkout.session.completed")
	finishFirst := f.holdLease(msg) // the first worker holds the lease and is inside an effect
	second, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if diff := cmp.Diff([]string{"m-evt_twice"}, failedIDs(second)); diff != "" {
		t.Errorf("second worker (-want +got):\n%s", diff)
	}
	if first := finishFirst(); len(first.BatchItemFailures) != 0 {
		t.Errorf("first worker failures %v, want none", failedIDs(first))
	}
	// The second copy comes back later and finds the event finished.
	third, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(third.BatchItemFailures) != 0 {
		t.Errorf("redelivery after DONE: failures %v, want none", failedIDs(third))
	}
	if got := len(f.biz.Runs()); got != 2 {
		t.Errorf("effects run %d times, want 2 (first and second, once each): %v", got, f.biz.Runs())
	}
}

func TestAbandonedLeaseIsTakenOver(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_abandoned", "checkout.session.completed")
	ctx := context.Background()
	// A worker leased the event and died.
	if _, err := f.store.Lease(ctx, "stripe#evt_abandoned", "dead-worker", t0, 15*time.Minute); err != nil {
		t.Fatal(err)
	}
	resp, _ := f.h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 1 {
		t.Fatalf("within the lease: failures %v, want the message back", failedIDs(resp))
	}
	f.clock = t0.Add(15*time.Minute + time.Second)
	resp, _ = f.h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("after the lease: failures %v, want none", failedIDs(resp))
	}
	f.wantStatus(t, "evt_abandoned", inbox.Done, 2)
	// The dead worker wakes up: it cannot overwrite the new owner's result.
	if _, err := f.store.Finish(ctx, "stripe#evt_abandoned", "dead-worker", inbox.Result{Status: inbox.Failed, Error: "late", At: f.clock}); !errors.Is(err, inbox.ErrLeaseLost) {
		t.Errorf("late Finish by the old owner: err = %v, want ErrLeaseLost", err)
	}
	if it := f.status(t, "evt_abandoned"); it.Status != inbox.Done {
		t.Errorf("status after the late write = %s, want DONE", it.Status)
	}
}

func TestPermanentErrorIsParkedAtOnce(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_perm", "checkout.session.completed")
	f.biz.failing["evt_perm/first"] = webhook.Permanent(errors.New("unknown price price_404"))
	resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures %v: a parked message must leave the events queue", failedIDs(resp))
	}
	const reason = "effect first of stripe#evt_perm: unknown price price_404"
	want := []parked{{Body: msg.Body, Reason: reason, Attempts: 1}}
	if diff := cmp.Diff(want, f.q.parked); diff != "" {
		t.Errorf("parked (-want +got):\n%s", diff)
	}
	if it := f.status(t, "evt_perm"); it.Status != inbox.Dead || it.LastError != reason {
		t.Errorf("item: status %s last_error %q, want DEAD with the reason", it.Status, it.LastError)
	}
}

func TestLastReceiveParksInsteadOfSilentRedrive(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_tired", "checkout.session.completed")
	f.biz.failing["evt_tired/first"] = errors.New("ses: throttled")
	var resp events.SQSEventResponse
	for receive := 1; receive <= 5; receive++ { // five receives, five attempts
		msg.Attributes["ApproximateReceiveCount"] = strconv.Itoa(receive)
		f.clock = f.clock.Add(time.Hour)
		resp, _ = f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	}
	if len(resp.BatchItemFailures) != 0 || len(f.q.parked) != 1 {
		t.Fatalf("failures %v, parked %d; want parked and acknowledged", failedIDs(resp), len(f.q.parked))
	}
	f.wantStatus(t, "evt_tired", inbox.Dead, 5)
}

// TestLastReceiveWithTriesLeftIsSentAgain: receives that ran nothing (a
// live lease met, no time left in the invocation) do not use up the
// event's tries. A failure on the last receive with tries left goes back
// as a fresh message after its backoff, not to the DLQ.
func TestLastReceiveWithTriesLeftIsSentAgain(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_unlucky", "checkout.session.completed")
	f.biz.failing["evt_unlucky/first"] = errors.New("ses: throttled")
	msg.Attributes["ApproximateReceiveCount"] = "5" // four receives met a live lease; this is the first attempt
	resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 0 || len(f.q.parked) != 0 {
		t.Fatalf("failures %v, parked %v; want acknowledged and not parked", failedIDs(resp), f.q.parked)
	}
	want := []resent{{Key: "stripe#evt_unlucky", After: 5 * time.Second}}
	if diff := cmp.Diff(want, f.q.resent); diff != "" {
		t.Errorf("sent again (-want +got):\n%s", diff)
	}
	f.wantStatus(t, "evt_unlucky", inbox.Failed, 1)
}

func TestNoHandlerIsIgnoredAndFinishedIsAcked(t *testing.T) {
	f := newFixture(t)
	msg := f.claim(t, "evt_ign", "unknown.type")
	for i := 0; i < 2; i++ {
		resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
		if len(resp.BatchItemFailures) != 0 {
			t.Errorf("delivery %d: failures %v, want none", i+1, failedIDs(resp))
		}
	}
	f.wantStatus(t, "evt_ign", inbox.Ignored, 1)
}

func TestUnreadableMessageIsParkedAsIs(t *testing.T) {
	f := newFixture(t)
	msg := message("junk", "this is not an envelope", 1)
	resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures %v, want the junk acknowledged after parking", failedIDs(resp))
	}
	if len(f.q.parked) != 1 || f.q.parked[0].Body != "this is not an envelope" {
		t.Errorf("parked %+v, want the original body", f.q.parked)
	}
}

func TestMissingClaimIsAcknowledged(t *testing.T) {
	f := newFixture(t)
	msg := message("gone", queue.Envelope{Key: "stripe#evt_gone"}.Marshal(), 1)
	resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 0 || len(f.biz.Runs()) != 0 {
		t.Errorf("failures %v runs %v; want acknowledged, nothing run", failedIDs(resp), f.biz.Runs())
	}
}

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
	msg := f.claim(t, "evt_twin", "checkout.session.completed")
	copyMsg := msg
	copyMsg.MessageId, copyMsg.ReceiptHandle = "m-evt_twin-copy", "rh-evt_twin-copy"
	finishTwin := f.holdLease(msg) // the twin holds the lease, inside its first effect
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
	first := finishTwin()
	second := <-done
	if len(first.BatchItemFailures)+len(second.BatchItemFailures) != 0 {
		t.Errorf("failures: twin %v, copy %v; want both acknowledged", failedIDs(first), failedIDs(second))
	}
	if len(f.q.delays) != 0 || len(f.q.resent) != 0 {
		t.Errorf("delays %v resent %v: the copy must not wait for the lease to end", f.q.delays, f.q.resent)
	}
	f.wantStatus(t, "evt_twin", inbox.Done, 1)
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
	if strings.Contains(it.LastError, "boom@example.com") || strings.Contains(f.logs.String(), "boom@example.com") {
		t.Errorf("the address in the panic text reached last_error %q or the log", it.LastError)
	}
	if !strings.Contains(f.logs.String(), "business code panicked") || !strings.Contains(f.logs.String(), `"stack"`) {
		t.Errorf("no ERROR line with the panic and its stack in the log:\n%s", f.logs.String())
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
		f.wantStatus(t, id, inbox.Received, 0)
		if d := f.q.delays["rh-"+id]; d != 2*time.Second {
			t.Errorf("%s: visibility %v, want 2s (1 s and half of it as jitter, rounded up)", id, d)
		}
	}
}

func TestMissingPayloadIsFetchedFromTheProvider(t *testing.T) {
	tests := []struct {
		name       string
		fetch      func(context.Context, string, []byte) ([]byte, error)
		wantStatus inbox.Status
		wantStored bool
	}{
		{"fetched and stored", func(_ context.Context, id string, _ []byte) ([]byte, error) {
			return []byte(`{"id":"` + id + `","object":"event"}`), nil
		}, inbox.Done, true},
		{"the provider does not know it", func(_ context.Context, id string, _ []byte) ([]byte, error) {
			return nil, webhook.Permanent(errors.New("stripe has no event " + id))
		}, inbox.Dead, false},
		{"the provider is down", func(_ context.Context, id string, _ []byte) ([]byte, error) {
			return nil, errors.New("stripe: 503")
		}, inbox.Failed, false},
		{"no fetcher for the provider", nil, inbox.Failed, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(c *processor.Config) { c.Fetch = map[string]provider.Fetch{"stripe": {Get: tt.fetch}} })
			// A payload too large to ride in its claim, whose own write was lost.
			ev := webhook.Event{Provider: "stripe", ID: "evt_nopayload", Type: "checkout.session.completed", Created: t0,
				Raw: []byte(`{"padding":"` + strings.Repeat("x", inbox.InlineMaxRaw) + `"}`)}
			if _, err := f.store.Claim(context.Background(), inbox.Claim{Event: ev, At: t0, TTL: time.Hour}); err != nil {
				t.Fatal(err)
			}
			msg := message("nopayload", queue.Envelope{Key: ev.Key(), Type: ev.Type}.Marshal(), 1)
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
			return effects.Do(ctx, fx, "welcome-email", func(ctx context.Context, _ string) error {
				effectDeadline, _ = ctx.Deadline()
				<-ctx.Done()
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

// BenchmarkProcessOneMessage processes one message end to end on the
// in-memory store and ledger.
func BenchmarkProcessOneMessage(b *testing.B) {
	store, q := inboxtest.NewMemory(), &queues{}
	// Three no-op effects, as the shop's checkout runs, so the benchmark
	// measures the processor's own work: lease, payload, ledger, finish.
	threeEffects := businessFunc(func(ctx context.Context, _ webhook.Event, fx effects.Runner) error {
		for _, name := range []string{"grant-access", "welcome-email", "create-invoice"} {
			if err := effects.Do(ctx, fx, name, func(context.Context, string) error { return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	h := processor.New(processor.Config{}, store, effects.NewMemoryLedger(), threeEffects, q, q, nil)
	ctx := context.Background()
	raw := make([]byte, 2048)
	msgs := make([]events.SQSEvent, b.N)
	for i := range msgs {
		ev := webhook.Event{Provider: "stripe", ID: fmt.Sprintf("evt_b%09d", i), Type: "checkout.session.completed", Raw: raw}
		it, err := store.Claim(ctx, inbox.Claim{Event: ev, At: time.Now(), TTL: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		if err := store.PutPayload(ctx, it, raw); err != nil {
			b.Fatal(err)
		}
		msgs[i] = events.SQSEvent{Records: []events.SQSMessage{message(ev.ID, queue.Envelope{Key: it.Key, Type: ev.Type}.Marshal(), 1)}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, _ := h.Handle(ctx, msgs[i])
		if len(resp.BatchItemFailures) != 0 {
			b.Fatal("message failed")
		}
	}
}

package processor_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// business runs the effects named in the event body ("a,b") through fx,
// recording each run; failing names an effect that errors with failWith.
type business struct {
	mu       sync.Mutex
	runs     []string
	failing  map[string]error
	panics   map[string]string // event ID → panic value, raised inside its first effect
	hang     map[string]bool   // event ID → its first effect blocks until ctx ends
	inEffect chan struct{}     // closed-over signal for the concurrency test
	release  chan struct{}
}

func (b *business) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	switch ev.Type {
	case "unknown.type":
		return fmt.Errorf("%s: %w", ev.Type, webhook.ErrNoHandler)
	}
	for _, name := range []string{"first", "second"} {
		err := fx.Do(ctx, name, func(ctx context.Context, ik string) error {
			if v, ok := b.panics[ev.ID]; ok {
				panic(v)
			}
			if b.hang[ev.ID] {
				<-ctx.Done()
				return fmt.Errorf("invoice call: %w", ctx.Err())
			}
			if b.inEffect != nil {
				b.inEffect <- struct{}{}
				<-b.release
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if err := b.failing[ev.ID+"/"+name]; err != nil {
				return err
			}
			b.runs = append(b.runs, ev.ID+"/"+name+"/"+ik)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (b *business) Runs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.runs...)
}

// queues records delays, messages sent again and parked messages.
type queues struct {
	mu     sync.Mutex
	delays map[string]time.Duration
	resent []resent
	parked []parked
}

type resent struct {
	Key   webhook.Key
	After time.Duration
}

func (q *queues) SendAfter(_ context.Context, env webhook.Envelope, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.resent = append(q.resent, resent{env.Key, d})
	return nil
}

type parked struct {
	Body, Reason string
	Attempts     int
}

func (q *queues) Delay(_ context.Context, receipt string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.delays == nil {
		q.delays = map[string]time.Duration{}
	}
	q.delays[receipt] = d
	return nil
}

func (q *queues) Park(_ context.Context, body string, _ webhook.Envelope, reason string, attempts int, _ time.Time) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.parked = append(q.parked, parked{body, reason, attempts})
	return nil
}

type fixture struct {
	mu     sync.Mutex // guards clock against the handler's goroutines
	h      *processor.Handler
	store  *inbox.Memory
	ledger *effects.MemoryLedger
	biz    *business
	q      *queues
	clock  time.Time
}

// newFixture returns a processor on the in-memory store with a fixed
// clock and jitter; a copy that finds a live lease waits 50 ms for its
// holder unless tune says otherwise.
func newFixture(t *testing.T, tune ...func(*processor.Config)) *fixture {
	t.Helper()
	f := &fixture{store: inbox.NewMemory(), ledger: effects.NewMemoryLedger(), q: &queues{}, clock: t0,
		biz: &business{failing: map[string]error{}, panics: map[string]string{}, hang: map[string]bool{}}}
	cfg := processor.Config{
		Now:      func() time.Time { return f.now() },
		Jitter:   func() float64 { return 0.5 },
		HeldWait: 50 * time.Millisecond,
	}
	for _, fn := range tune {
		fn(&cfg)
	}
	f.h = processor.New(cfg, f.store, f.ledger, f.biz, f.q, f.q, nil)
	return f
}

func (f *fixture) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.clock
}

// claim puts an event in the inbox as the receiver would and returns its message.
func (f *fixture) claim(t *testing.T, id, typ string) events.SQSMessage {
	t.Helper()
	ev := webhook.Event{Provider: "stripe", ID: id, Type: typ, Created: t0, Raw: []byte(`{"id":"` + id + `"}`)}
	it, err := f.store.Claim(context.Background(), inbox.Claim{Event: ev, At: f.clock, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if it.Payload == nil {
		if err := f.store.PutPayload(context.Background(), it, ev.Raw); err != nil {
			t.Fatal(err)
		}
	}
	return message(id, webhook.Envelope{Key: ev.Key(), Type: typ}.Marshal(), 1)
}

func message(id, body string, receives int) events.SQSMessage {
	return events.SQSMessage{
		MessageId:     "m-" + id,
		ReceiptHandle: "rh-" + id,
		Body:          body,
		Attributes:    map[string]string{"ApproximateReceiveCount": strconv.Itoa(receives)},
	}
}

func (f *fixture) status(t *testing.T, id string) inbox.Item {
	t.Helper()
	it, err := f.store.Get(context.Background(), webhook.NewKey("stripe", id))
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func failedIDs(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

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
	if it := f.status(t, "evt_partial"); it.Status != inbox.Done || it.Attempts != 2 {
		t.Errorf("final item: status %s attempts %d, want DONE 2", it.Status, it.Attempts)
	}
}

func TestSameMessageTwiceAtOnceRunsEffectsOnce(t *testing.T) {
	f := newFixture(t)
	f.biz.inEffect, f.biz.release = make(chan struct{}), make(chan struct{})
	msg := f.claim(t, "evt_twice", "checkout.session.completed")
	var wg sync.WaitGroup
	var first events.SQSEventResponse
	wg.Add(1)
	go func() {
		defer wg.Done()
		first, _ = f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	}()
	<-f.biz.inEffect // the first worker holds the lease and is inside an effect
	second, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if diff := cmp.Diff([]string{"m-evt_twice"}, failedIDs(second)); diff != "" {
		t.Errorf("second worker (-want +got):\n%s", diff)
	}
	close(f.biz.inEffect)
	f.biz.inEffect = nil
	f.biz.release <- struct{}{}
	wg.Wait()
	if len(first.BatchItemFailures) != 0 {
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
	if it := f.status(t, "evt_abandoned"); it.Status != inbox.Done || it.Attempts != 2 {
		t.Errorf("after takeover: status %s attempts %d, want DONE 2", it.Status, it.Attempts)
	}
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
	if it := f.status(t, "evt_tired"); it.Status != inbox.Dead || it.Attempts != 5 {
		t.Errorf("status %s attempts %d, want DEAD after 5", it.Status, it.Attempts)
	}
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
	if it := f.status(t, "evt_unlucky"); it.Status != inbox.Failed || it.Attempts != 1 {
		t.Errorf("status %s attempts %d, want FAILED after 1 attempt", it.Status, it.Attempts)
	}
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
	if it := f.status(t, "evt_ign"); it.Status != inbox.Ignored || it.Attempts != 1 {
		t.Errorf("status %s attempts %d, want IGNORED 1", it.Status, it.Attempts)
	}
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
	msg := message("gone", webhook.Envelope{Key: "stripe#evt_gone"}.Marshal(), 1)
	resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if len(resp.BatchItemFailures) != 0 || len(f.biz.Runs()) != 0 {
		t.Errorf("failures %v runs %v; want acknowledged, nothing run", failedIDs(resp), f.biz.Runs())
	}
}

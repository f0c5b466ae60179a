package processor_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// business runs the effects named in the event body ("a,b") through fx,
// recording each run; failing maps "<event id>/<effect>" to its error.
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
		err := effects.Do(ctx, fx, name, func(ctx context.Context, ik string) error {
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
	bodies []string // of the messages in resent
	parked []parked
}

type resent struct {
	Key   webhook.Key
	After time.Duration
}

func (q *queues) SendAfter(_ context.Context, env queue.Envelope, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.resent = append(q.resent, resent{env.Key, d})
	q.bodies = append(q.bodies, env.Marshal())
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

func (q *queues) Park(_ context.Context, body string, _ queue.Envelope, reason string, attempts int, _ time.Time) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.parked = append(q.parked, parked{body, reason, attempts})
	return nil
}

type fixture struct {
	mu     sync.Mutex // guards clock against the handler's goroutines
	h      *processor.Handler
	store  *inboxtest.Memory
	ledger *effects.MemoryLedger
	biz    *business
	q      *queues
	clock  time.Time
	logs   bytes.Buffer // the handler's log, as JSON lines
}

// newFixture returns a processor on the in-memory store with a fixed
// clock and jitter, logging to f.logs; a copy that finds a live lease
// waits 50 ms for its holder unless tune says otherwise.
func newFixture(t *testing.T, tune ...func(*processor.Config)) *fixture {
	t.Helper()
	f := &fixture{store: inboxtest.NewMemory(), ledger: effects.NewMemoryLedger(), q: &queues{}, clock: t0,
		biz: &business{failing: map[string]error{}, panics: map[string]string{}, hang: map[string]bool{}}}
	cfg := processor.Config{
		Now:      func() time.Time { return f.now() },
		Jitter:   func() float64 { return 0.5 },
		HeldWait: 50 * time.Millisecond,
	}
	for _, fn := range tune {
		fn(&cfg)
	}
	f.h = processor.New(cfg, f.store, f.ledger, f.biz, f.q, f.q, slog.New(slog.NewJSONHandler(&f.logs, nil)))
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
	return message(id, queue.Envelope{Key: ev.Key(), Type: typ}.Marshal(), 1)
}

// wantStatus checks that event id is in status after as many attempts.
func (f *fixture) wantStatus(t *testing.T, id string, status inbox.Status, attempts int) {
	t.Helper()
	if it := f.status(t, id); it.Status != status || it.Attempts != attempts {
		t.Errorf("%s: status %s after %d attempts (last error %q), want %s after %d", id, it.Status, it.Attempts, it.LastError, status, attempts)
	}
}

// holdLease handles msg in the background until the business is inside
// the event's first effect, holding its lease, and returns the function
// that lets the effects go on and returns that Handle's response.
func (f *fixture) holdLease(msg events.SQSMessage) (finish func() events.SQSEventResponse) {
	f.biz.inEffect, f.biz.release = make(chan struct{}), make(chan struct{})
	done := make(chan events.SQSEventResponse)
	go func() {
		resp, _ := f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
		done <- resp
	}()
	<-f.biz.inEffect
	return func() events.SQSEventResponse {
		close(f.biz.inEffect)
		f.biz.inEffect = nil // the next effects run freely (written before the release, read after)
		f.biz.release <- struct{}{}
		return <-done
	}
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

// deadlineLedger is the in-memory ledger with DynamoDB's manners: a
// record written with an ended context fails.
type deadlineLedger struct{ *effects.MemoryLedger }

func (l deadlineLedger) For(key webhook.Key) effects.Runner {
	return deadlineRunner{l.MemoryLedger.For(key)}
}

type deadlineRunner struct{ effects.Runner }

func (r deadlineRunner) Run(ctx context.Context, e effects.Effect) error {
	if err := r.Runner.Run(ctx, e); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("record effect %s: %w", e.Name, err)
	}
	return nil
}

type businessFunc func(ctx context.Context, ev webhook.Event, fx effects.Runner) error

func (b businessFunc) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	return b(ctx, ev, fx)
}

// watchedStore is the in-memory store that calls onGet before each Get: a
// copy waiting for a lease holder reads the event with Get.
type watchedStore struct {
	*inboxtest.Memory
	onGet func()
}

func (s watchedStore) Get(ctx context.Context, key webhook.Key) (inbox.Item, error) {
	s.onGet()
	return s.Memory.Get(ctx, key)
}

// recordedEffects returns the names of the effects p's ledger recorded for
// key, in order.
func recordedEffects(t *testing.T, p *pipelinetest.Pipeline, key webhook.Key) []string {
	t.Helper()
	recs, err := ledger.New(p.DynamoDB, p.Stack.Tables["InboxTable"], time.Hour).Records(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range recs {
		names = append(names, r.Effect)
	}
	return names
}

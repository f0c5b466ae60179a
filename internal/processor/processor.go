// Package processor turns queued events into business effects, once each.
//
// For every SQS message it leases the event's inbox claim with one
// conditional write, runs the business with an effect ledger bound to the
// event, and writes the outcome conditioned on still holding the lease.
// Errors are classified once, in one pure function (decide): DONE,
// IGNORED, retried after a backoff, or parked in the DLQ with the reason;
// a failure of the infrastructure is counted apart from the event's tries,
// so an outage is ridden out instead of parking healthy events.
// docs/architecture.md ("The processor") has the table of outcomes;
// docs/reliability.md the guarantees and the timing rules.
//
// A dead worker never takes an event with it: function timeout < lease <
// the queue's visibility timeout, a message that finds a live lease comes
// back when it ends, and a message on SQS's last receive is sent again
// fresh rather than left for SQS to park. Each invocation keeps to its
// deadline: effects end a reserve before it, so the outcome is always
// written. A missing payload, or one an id-only notification points at,
// is fetched from its provider (Config.Fetch). One bad message never fails
// the batch (partial batch responses), and a panic in the business fails
// its event alone. A claim's subjects are indexed before anything runs,
// and an erasure of an unfinished event waits for it to finish
// (inbox.Item.EraseWhenFinished). A Handler is safe for concurrent use.
package processor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"golang.org/x/sync/errgroup"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Defaults of Config, for the template's processor (Timeout 30 s, events
// queue VisibilityTimeout 180 s): see docs/reliability.md.
const (
	DefaultLeaseFor = 45 * time.Second
	DefaultBudget   = 10 * time.Second
	DefaultReserve  = 2 * time.Second
)

const (
	// retrySoon is the visibility of a message the invocation had no time
	// to start (plus up to as much again of jitter).
	retrySoon = time.Second
	// leaseJitter is the most added to a lease's end when a message is put
	// back until then, so copies do not all come back at once.
	leaseJitter = 2 * time.Second
	// backoffBase is the first retry's backoff ceiling (Config.BackoffMax).
	backoffBase = 10 * time.Second
)

// Config tunes a Handler; zero fields take their defaults.
type Config struct {
	// LeaseFor is how long a lease lasts: the function timeout plus a
	// margin, and less than the events queue's visibility timeout (docs/reliability.md
	// states the rule). Default 45 s.
	LeaseFor time.Duration
	// MaxReceiveCount is the events queue's redrive maxReceiveCount. On
	// the receive that reaches it, a failing event that has had as many
	// attempts is parked by the processor, with its reason, rather than
	// moved by SQS silently; any other message that must come back is sent
	// again as a fresh one. Default 5.
	MaxReceiveCount int
	// Budget is the least time left in the invocation for starting a
	// message; later messages go back with a short visibility. Default 10 s.
	Budget time.Duration
	// Reserve is the time kept after a message's effects for recording
	// them in the ledger and writing the outcome: effect calls get the
	// invocation's deadline minus Reserve, the ledger half of it more.
	// Default 2 s.
	Reserve time.Duration
	// HeldWait is how long a message that finds a live lease waits for the
	// holder to finish before it is put back until the lease ends.
	// Default Budget/2.
	HeldWait time.Duration
	// BackoffMax bounds the visibility delay after a transient failure:
	// a random time in [0, min(BackoffMax, 10 s·2^(attempt-1))]; after the
	// n-th failure of the infrastructure one in [ceiling/2, ceiling] with
	// ceiling = min(BackoffMax, 10 s·2^(n-1)), so it grows. Default 15
	// min, also the most: the longest delay SQS gives a message sent again
	// on its last receive.
	BackoffMax time.Duration
	// MaxInfraFailures is how many attempts of an event may fail because
	// the infrastructure was unavailable before the event is parked with
	// the last such reason. Default DefaultMaxInfraFailures.
	MaxInfraFailures int
	// MaxBusyRounds is how many times the message of an event whose
	// attempts try nothing (webhook.ErrBusy) is sent again, fresh, on
	// its last receive with the attempts taken back (about 2.5 minutes
	// a round); after that such attempts count, and the event is parked
	// once out of tries, with its reason. Default DefaultMaxBusyRounds.
	MaxBusyRounds int
	// Concurrency is how many messages of a batch run at once, in each of
	// its two lanes: the id-only providers' messages (IDOnly) and the
	// others. Default 4.
	Concurrency int
	// Fetch says, by provider name, how an event's payload is fetched
	// from its provider's API (provider.Fetch): an unfinished event whose
	// stored payload is missing, or is only a pointer (Fetch.Pointer: a
	// GoPay notification, a Stripe thin event), fresh on every attempt;
	// the notification is then never read as content. A provider without
	// a Get makes such an event FAILED (and parked at the last receive).
	Fetch map[string]provider.Fetch
	// IDOnly names the providers that notify with an id only
	// (provider.Webhook.IDOnly: GoPay),
	// whose ids anyone can make up: their messages run in a lane of their
	// own in every batch, and a fetch their provider answers "not found"
	// (provider.ErrNotFound) is never parked.
	IDOnly map[string]bool
	// NotFoundTries is how many tries an id-only event gets when its
	// provider answers that it does not know the object
	// (provider.ErrNotFound): the ones before the last are retried after
	// a backoff, in case the provider's API lags behind its notification;
	// the last ends IGNORED. Default DefaultNotFoundTries.
	NotFoundTries int
	// NotFoundWindow is how long an id-only event that ended IGNORED as
	// not found stays so: until then a notification of it is a duplicate
	// at the receiver and nothing fetches it. Default
	// DefaultNotFoundWindow.
	NotFoundWindow time.Duration
	// Live is the mode the deployment runs, by provider, for the
	// providers whose events say theirs (Stripe's livemode, Adyen's
	// live): an event of the other mode ends IGNORED before the business
	// runs (errOtherMode). A provider not listed is not checked.
	Live map[string]bool
	// NotFoundHold replaces NotFoundWindow for an id its provider did not
	// know at this claim only: the fetch error counts the provider's "not
	// found" answers (provider.NotFoundError) and there were no more than
	// NotFoundTries, so a provider whose API lags its notification is
	// fetched again at its next notification after this short hold. Default
	// DefaultNotFoundHold.
	NotFoundHold time.Duration
	// Subjects returns the keyed hashes of the people a fetched event is
	// about (an id-only notification's object, a lost payload fetched
	// again), which the inbox indexes; nil indexes none.
	Subjects func(ctx context.Context, ev webhook.Event) ([]string, error)
	Now      func() time.Time
	// Jitter returns a number in [0, 1); default math/rand/v2.
	Jitter func() float64
	// Metrics records Processed, Ignored, Failed, Parked, LeaseTakeovers,
	// EffectDuration and EndToEndAge; nil records nothing.
	Metrics *metrics.Recorder
	// Parked, when set, is told the error of each event parked, once its
	// outcome is written: the destinations count theirs. nil tells none.
	Parked func(err error)
}

// Defaults of Config.NotFoundTries, Config.NotFoundWindow and
// Config.NotFoundHold.
const (
	DefaultNotFoundTries  = 2
	DefaultNotFoundWindow = 15 * time.Minute
	DefaultNotFoundHold   = 10 * time.Second
	// DefaultMaxBusyRounds is Config.MaxBusyRounds's default: attempts
	// that try nothing are taken back for about an hour.
	DefaultMaxBusyRounds = 20
)

func (c Config) withDefaults() Config {
	orDefault(&c.LeaseFor, DefaultLeaseFor)
	orDefault(&c.MaxReceiveCount, 5)
	orDefault(&c.Budget, DefaultBudget)
	orDefault(&c.Reserve, DefaultReserve)
	orDefault(&c.HeldWait, c.Budget/2)
	orDefault(&c.BackoffMax, 15*time.Minute)
	orDefault(&c.MaxInfraFailures, DefaultMaxInfraFailures)
	orDefault(&c.MaxBusyRounds, DefaultMaxBusyRounds)
	orDefault(&c.Concurrency, 4)
	orDefault(&c.NotFoundTries, DefaultNotFoundTries)
	orDefault(&c.NotFoundWindow, DefaultNotFoundWindow)
	orDefault(&c.NotFoundHold, DefaultNotFoundHold)
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Jitter == nil {
		c.Jitter = mathrand.Float64
	}
	return c
}

// orDefault sets *v to def unless *v is positive.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Business is the user's code: it runs the effects of one event through fx
// and returns nil, an error wrapping webhook.ErrNoHandler, a permanent
// error (webhook.Permanent), one wrapping webhook.ErrBusy (nothing tried),
// or any other error to be retried. A panic is recovered and counts as an
// error to retry.
type Business interface {
	Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error
}

// leaseStore lists the inbox calls the processor makes.
type leaseStore interface {
	Lease(ctx context.Context, key webhook.Key, owner string, now time.Time, d time.Duration) (inbox.Item, error)
	Finish(ctx context.Context, key webhook.Key, owner string, r inbox.Result) (inbox.Item, error)
	Get(ctx context.Context, key webhook.Key) (inbox.Item, error)
	Payload(ctx context.Context, key webhook.Key) ([]byte, error)
	PutPayload(ctx context.Context, it inbox.Item, raw []byte) error
	IndexSubjects(ctx context.Context, key webhook.Key, hashes []string, expiresAt time.Time) error
	RemovePayload(ctx context.Context, key webhook.Key, why string, at time.Time) (inbox.Footprint, error)
}

// runners hands out the effect runner of one event.
type runners interface {
	For(key webhook.Key) effects.Runner
}

// eventsQueue puts a message back: hidden for a while (Delay), or, on its
// last receive, as a fresh message sent after a delay (SendAfter).
type eventsQueue interface {
	Delay(ctx context.Context, receiptHandle string, d time.Duration) error
	SendAfter(ctx context.Context, env queue.Envelope, d time.Duration) error
}

// deadLetters parks an event with its reason.
type deadLetters interface {
	Park(ctx context.Context, body string, env queue.Envelope, reason string, attempts int, at time.Time) error
}

// Handler processes batches from the events queue.
type Handler struct {
	cfg      Config
	store    leaseStore
	ledger   runners
	business Business
	events   eventsQueue
	dlq      deadLetters
	log      *slog.Logger
	instance string // identifies this process in lease owners
}

// New returns a Handler.
func New(cfg Config, store leaseStore, l runners, b Business, events eventsQueue, dlq deadLetters, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var id [6]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails
	return &Handler{cfg: cfg.withDefaults(), store: store, ledger: l, business: b, events: events, dlq: dlq, log: log, instance: hex.EncodeToString(id[:])}
}

// Handle processes one batch and reports the messages to retry. With a
// deadline on ctx (Lambda's), it starts a message only while at least
// Budget remains and gives its effects the deadline minus Reserve; the
// messages it does not start go back with a short visibility.
func (h *Handler) Handle(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) > h.cfg.LeaseFor {
		h.log.Error("the invocation outlasts the lease: set LEASE_DURATION above the function timeout",
			"lease", h.cfg.LeaseFor.String(), "remaining", time.Until(deadline).Round(time.Millisecond).String())
	}
	b := &batchRun{msgs: batch.Records, retry: make([]bool, len(batch.Records))}
	// Id-only notifications (GoPay) run in a lane of their own: made-up
	// ids, which anyone can send, never take the other providers' slots.
	var lanes errgroup.Group
	for _, lane := range h.lanes(batch.Records) {
		lanes.Go(func() error { h.lane(ctx, b, lane); return nil })
	}
	_ = lanes.Wait() // a lane returns no error
	if n := b.notStarted.Load(); n > 0 {
		h.log.Warn("messages not started: too little time left in the invocation; they come back shortly",
			"not_started", n, "budget", h.cfg.Budget.String())
	}
	var resp events.SQSEventResponse
	for i, msg := range batch.Records {
		if b.retry[i] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: msg.MessageId})
		}
	}
	return resp, nil
}

// batchRun is one batch being processed.
type batchRun struct {
	msgs       []events.SQSMessage
	retry      []bool // by index in msgs: SQS delivers the message again
	notStarted atomic.Int64
}

// lane processes the messages of b at the indexes in lane, Concurrency at
// a time, each started only while Budget remains.
func (h *Handler) lane(ctx context.Context, b *batchRun, lane []int) {
	var g errgroup.Group
	g.SetLimit(h.cfg.Concurrency)
	for _, i := range lane {
		g.Go(func() error {
			if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < h.cfg.Budget {
				b.notStarted.Add(1)
				b.retry[i] = h.notStarted(ctx, b.msgs[i])
				return nil
			}
			b.retry[i] = h.guarded(ctx, b.msgs[i])
			return nil
		})
	}
	_ = g.Wait() // a message returns no error
}

// lanes splits a batch into the indexes of the other providers' messages
// and of the id-only providers' (Config.IDOnly), each in batch order.
func (h *Handler) lanes(msgs []events.SQSMessage) [2][]int {
	var lanes [2][]int
	for i, msg := range msgs {
		lane := 0
		if env, err := queue.ParseEnvelope(msg.Body); err == nil && h.cfg.IDOnly[env.Key.Provider()] {
			lane = 1
		}
		lanes[lane] = append(lanes[lane], i)
	}
	return lanes
}

// guarded runs message, turning a panic outside the business code (which
// run recovers itself) into a retry of this message alone.
func (h *Handler) guarded(ctx context.Context, msg events.SQSMessage) (retry bool) {
	defer func() {
		if r := recover(); r != nil {
			h.log.Error("processing a message panicked; retry", "message_id", msg.MessageId,
				"panic", logs.RedactEmails(fmt.Sprint(r)), "stack", string(debug.Stack()))
			retry = true
		}
	}()
	return h.message(ctx, msg)
}

// Package processor turns queued events into business effects, once each.
//
// For every SQS message it leases the event's inbox claim with one
// conditional write, runs the business handler with an effect ledger bound
// to the event, and writes the outcome conditioned on still holding the
// lease. Errors are classified once, here:
//
//   - nil                 → DONE, message acknowledged;
//   - webhook.ErrNoHandler → IGNORED, acknowledged;
//   - permanent           → parked in the DLQ with the reason, DEAD, and
//     acknowledged so it leaves the events queue at once;
//   - anything else       → FAILED, the message reported as a batch item
//     failure and hidden for an exponential backoff with full jitter; on
//     the last receive before SQS's maxReceiveCount it is parked instead.
//
// A message for an event already DONE or IGNORED is acknowledged without
// running anything. A message for a DEAD event is processed again: it came
// back from the DLQ through SQS's own redrive, which cannot mark the
// message, so a person asked for it (inbox.Store.Lease takes DEAD). A rare
// late duplicate of the original message is run again too, which is safe:
// the effect ledger keeps finished effects from repeating.
//
// One bad message never fails the batch (partial batch responses). A
// Handler is safe for concurrent use.
package processor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

// Config tunes a Handler; zero fields take their defaults.
type Config struct {
	// LeaseFor is how long a lease lasts; it must exceed the function
	// timeout so a live worker never loses its lease. Default 15 min.
	LeaseFor time.Duration
	// MaxReceiveCount is the events queue's redrive maxReceiveCount. The
	// receive that reaches it parks the event itself, with its reason,
	// rather than letting SQS move it silently. Default 5.
	MaxReceiveCount int
	// BackoffBase and BackoffMax bound the visibility delay after a
	// transient failure: a random time in [0, min(Max, Base·2^(attempt-1))].
	// Defaults 10 s and 15 min.
	BackoffBase, BackoffMax time.Duration
	// Concurrency is how many messages of a batch run at once. Default 4.
	Concurrency int
	Now         func() time.Time
	// Jitter returns a number in [0, 1); default math/rand/v2.
	Jitter func() float64
	// Metrics records Processed, Ignored, Failed, Parked, LeaseTakeovers,
	// EffectDuration and EndToEndAge; nil records nothing.
	Metrics *metrics.Recorder
}

func (c Config) withDefaults() Config {
	if c.LeaseFor <= 0 {
		c.LeaseFor = 15 * time.Minute
	}
	if c.MaxReceiveCount <= 0 {
		c.MaxReceiveCount = 5
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = 10 * time.Second
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = 15 * time.Minute
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Jitter == nil {
		c.Jitter = mathrand.Float64
	}
	return c
}

// Business is the user's code: it runs the effects of one event through fx
// and returns nil, an error wrapping webhook.ErrNoHandler, a permanent
// error (webhook.Permanent), or any other error to be retried.
type Business interface {
	Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error
}

// leaseStore lists the inbox calls the processor makes.
type leaseStore interface {
	Lease(ctx context.Context, key webhook.Key, owner string, now time.Time, d time.Duration) (inbox.Item, error)
	Finish(ctx context.Context, key webhook.Key, owner string, r inbox.Result) (inbox.Item, error)
	Payload(ctx context.Context, key webhook.Key) ([]byte, error)
}

// ledger hands out the effect runner of one event.
type ledger interface {
	For(key webhook.Key) effects.Runner
}

// eventsQueue hides a message for its backoff.
type eventsQueue interface {
	Delay(ctx context.Context, receiptHandle string, d time.Duration) error
}

// deadLetters parks an event with its reason.
type deadLetters interface {
	Park(ctx context.Context, body string, env webhook.Envelope, reason string, attempts int, at time.Time) error
}

// Handler processes batches from the events queue.
type Handler struct {
	cfg      Config
	store    leaseStore
	ledger   ledger
	business Business
	events   eventsQueue
	dlq      deadLetters
	log      *slog.Logger
	instance string // identifies this process in lease owners
}

// New returns a Handler.
func New(cfg Config, store leaseStore, l ledger, b Business, events eventsQueue, dlq deadLetters, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var id [6]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails
	return &Handler{cfg: cfg.withDefaults(), store: store, ledger: l, business: b, events: events, dlq: dlq, log: log, instance: hex.EncodeToString(id[:])}
}

// Handle processes one batch and reports the messages to retry.
func (h *Handler) Handle(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
	var (
		mu       sync.Mutex
		failures []events.SQSBatchItemFailure
		wg       sync.WaitGroup
		slots    = make(chan struct{}, h.cfg.Concurrency)
	)
	for _, msg := range batch.Records {
		wg.Add(1)
		slots <- struct{}{}
		go func(msg events.SQSMessage) {
			defer func() { <-slots; wg.Done() }()
			if retry := h.message(ctx, msg); retry {
				mu.Lock()
				failures = append(failures, events.SQSBatchItemFailure{ItemIdentifier: msg.MessageId})
				mu.Unlock()
			}
		}(msg)
	}
	wg.Wait()
	return events.SQSEventResponse{BatchItemFailures: failures}, nil
}

// message processes one message and reports whether SQS should deliver it again.
func (h *Handler) message(ctx context.Context, msg events.SQSMessage) (retry bool) {
	log := h.log.With("message_id", msg.MessageId, "receive_count", msg.Attributes["ApproximateReceiveCount"])
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		log = log.With("request_id", lc.AwsRequestID)
	}
	// The event's trace came with the message: what this message sends
	// (a park in the DLQ) carries it on, and its log lines name it.
	if trace := msg.Attributes[queue.AttrTrace]; trace != "" {
		ctx = queue.WithTrace(ctx, trace)
		log = log.With("trace_id", queue.TraceRoot(trace))
	}
	env, err := webhook.ParseEnvelope(msg.Body)
	if err != nil {
		// Not ours to interpret; park it as it is, for a person.
		log.Error("unreadable message parked", "reason", err.Error())
		if perr := h.park(ctx, log, msg.Body, webhook.Envelope{}, err, 0); perr != nil {
			return true
		}
		h.cfg.Metrics.Emit(metrics.Dims{}, metrics.Counted(metrics.Parked, 1))
		return false
	}
	log = log.With("key", env.Key.String(), "type", env.Type)
	owner := h.instance + "/" + msg.MessageId
	now := h.cfg.Now()
	it, err := h.store.Lease(ctx, env.Key, owner, now, h.cfg.LeaseFor)
	switch {
	case errors.Is(err, inbox.ErrFinished):
		log.Info("already finished; acknowledged", "status", string(it.Status))
		return false
	case errors.Is(err, inbox.ErrLeaseHeld):
		log.Info("another worker holds the lease; retry later", "lease_until", it.LeaseUntil)
		return true
	case errors.Is(err, inbox.ErrNotFound):
		log.Warn("no claim for this message (expired or released); acknowledged")
		return false
	case err != nil:
		log.Error("lease failed; retry", "reason", err.Error())
		return true
	}
	if it.TakenFrom != "" {
		log.Warn("took over a lease that ran out", "from", it.TakenFrom, "attempts", it.Attempts)
		h.cfg.Metrics.Emit(metrics.Dims{Provider: env.Key.Provider(), EventType: env.Type}, metrics.Counted(metrics.LeaseTakeovers, 1))
	}
	err = h.run(ctx, env.Key, it)
	return h.finish(ctx, log, msg, env, owner, it, err)
}

// run rebuilds the verified event from the inbox and runs the business on it.
func (h *Handler) run(ctx context.Context, key webhook.Key, it inbox.Item) error {
	raw, err := h.store.Payload(ctx, key)
	if err != nil {
		return fmt.Errorf("load payload: %w", err) // transient: a later delivery stores it
	}
	ev := webhook.Event{
		Provider: key.Provider(),
		ID:       key.EventID(),
		Type:     it.EventType,
		Created:  it.Created,
		Livemode: it.Livemode,
		Raw:      raw,
	}
	return h.business.Handle(ctx, ev, timedRunner{h.ledger.For(key), h.cfg.Metrics})
}

// finish classifies err, once, and writes the outcome.
func (h *Handler) finish(ctx context.Context, log *slog.Logger, msg events.SQSMessage, env webhook.Envelope, owner string, it inbox.Item, err error) (retry bool) {
	now := h.cfg.Now()
	receives, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	lastReceive := receives >= h.cfg.MaxReceiveCount
	var res inbox.Result
	switch {
	case err == nil:
		res = inbox.Result{Status: inbox.Done, Outcome: "effects done", At: now}
	case errors.Is(err, webhook.ErrNoHandler):
		res = inbox.Result{Status: inbox.Ignored, Outcome: "no handler for " + env.Type, At: now}
	case webhook.IsPermanent(err) || lastReceive:
		if perr := h.park(ctx, log, env.Marshal(), env, err, it.Attempts); perr != nil {
			res = inbox.Result{Status: inbox.Failed, Error: err.Error(), At: now}
			break
		}
		res = inbox.Result{Status: inbox.Dead, Outcome: "parked in DLQ", Error: err.Error(), At: now}
	default:
		res = inbox.Result{Status: inbox.Failed, Error: err.Error(), At: now}
	}
	if _, ferr := h.store.Finish(ctx, env.Key, owner, res); ferr != nil {
		// Lease lost: a new owner runs the event; the ledger keeps it from
		// repeating what we finished. Let the message come back.
		log.Error("could not record the outcome", "status", string(res.Status), "reason", ferr.Error())
		return true
	}
	h.count(env, it, res)
	if res.Status != inbox.Failed {
		log.Info("event "+string(res.Status), "attempts", it.Attempts, "reason", res.Error)
		return false
	}
	delay := h.backoff(it.Attempts)
	log.Warn("event FAILED; will retry", "attempts", it.Attempts, "retry_in", delay.String(), "reason", res.Error)
	if derr := h.events.Delay(ctx, msg.ReceiptHandle, delay); derr != nil {
		log.Warn("could not set the backoff; SQS's visibility timeout applies", "reason", derr.Error())
	}
	return true
}

// count records the outcome of one attempt.
func (h *Handler) count(env webhook.Envelope, it inbox.Item, res inbox.Result) {
	d := metrics.Dims{Provider: env.Key.Provider(), EventType: env.Type}
	switch res.Status {
	case inbox.Done:
		if it.Created.IsZero() {
			h.cfg.Metrics.Emit(d, metrics.Counted(metrics.Processed, 1))
			break
		}
		h.cfg.Metrics.Emit(d, metrics.Counted(metrics.Processed, 1), metrics.Secs(metrics.EndToEndAge, res.At.Sub(it.Created)))
	case inbox.Ignored:
		h.cfg.Metrics.Emit(d, metrics.Counted(metrics.Ignored, 1))
	case inbox.Dead:
		h.cfg.Metrics.Emit(d, metrics.Counted(metrics.Parked, 1))
	case inbox.Failed:
		h.cfg.Metrics.Emit(d, metrics.Counted(metrics.Failed, 1))
	}
}

// park sends the event to the DLQ with err as the reason.
func (h *Handler) park(ctx context.Context, log *slog.Logger, body string, env webhook.Envelope, err error, attempts int) error {
	if perr := h.dlq.Park(ctx, body, env, err.Error(), attempts, h.cfg.Now()); perr != nil {
		log.Error("could not park in the DLQ; retry", "reason", perr.Error())
		return perr
	}
	return nil
}

// backoff returns the visibility delay after the attempt-th failure:
// full jitter over an exponential ceiling.
func (h *Handler) backoff(attempt int) time.Duration {
	ceiling := h.cfg.BackoffMax
	if attempt < 1 {
		attempt = 1
	}
	if attempt <= 30 {
		if c := h.cfg.BackoffBase << (attempt - 1); c > 0 && c < ceiling {
			ceiling = c
		}
	}
	d := time.Duration(h.cfg.Jitter() * float64(ceiling))
	if d < time.Second {
		d = time.Second
	}
	return d
}

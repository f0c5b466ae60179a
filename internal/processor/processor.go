// Package processor turns queued events into business effects, once each.
//
// For every SQS message it leases the event's inbox claim with one
// conditional write, runs the business handler with an effect ledger bound
// to the event, and writes the outcome conditioned on still holding the
// lease. Errors are classified once, here:
//
//   - nil                 → DONE, message acknowledged;
//   - webhook.ErrNoHandler → IGNORED, acknowledged;
//   - an event whose mode is not the deployment's (Config.Live:
//     a test-mode Stripe or Adyen event on a live deployment) → IGNORED
//     with the reason, before the business runs, counted in OtherMode;
//   - provider.ErrNotFound (an id-only notification whose object its
//     provider does not know) → FAILED and retried after a backoff until
//     the event has had Config.NotFoundTries tries, then IGNORED
//     "not found at <provider>" with renewals held off for
//     Config.NotFoundWindow: never parked, so a made-up id raises no
//     alarm, and a repeat of it is a duplicate at the receiver;
//   - permanent           → parked in the DLQ with the reason, DEAD, and
//     acknowledged so it leaves the events queue at once;
//   - the infrastructure unavailable (a DynamoDB or SQS call that timed
//     out, was reset, throttled or answered 5xx) → FAILED and counted in
//     the event's InfraFailures, not its tries: the message is hidden for
//     a backoff that grows with every such failure (half to all of an
//     exponential ceiling), and the event is parked only after
//     Config.MaxInfraFailures of them, so an outage of the store is
//     ridden out instead of using up the event's tries in minutes;
//   - anything else       → FAILED, the message reported as a batch item
//     failure and hidden for an exponential backoff with full jitter. On
//     the last receive SQS allows (maxReceiveCount) it is parked instead
//     once the event has had that many attempts (infrastructure failures
//     not counted), or else sent again as a fresh message after its
//     backoff.
//
// A lease that fails for a reason other than the infrastructure (the
// store refused the request: access denied, a validation error; or the
// item cannot be decoded) is parked at once with the reason, as a
// permanent error: nothing ran, so there are no tries to count, and
// waiting does not change it.
//
// A message for an event already DONE or IGNORED is acknowledged without
// running anything. A message for a DEAD event is processed again: it came
// back from the DLQ through SQS's own redrive, which cannot mark the
// message, so a person asked for it (inbox.Store.Lease takes DEAD). A rare
// late duplicate of the original message is run again too, which is safe:
// the effect ledger keeps finished effects from repeating.
//
// Crash safety rests on three durations (see Timing and
// docs/reliability.md): function timeout < lease < the queue's visibility
// timeout. A worker that dies holding a lease leaves it to expire before SQS
// delivers its message again, so the next receive takes the event over.
// A message that finds a live lease waits a moment for the holder (a
// duplicate whose twin is running usually finds it DONE), and is otherwise
// made visible again when the lease ends, not retried blindly. A message
// that must go back on the last receive SQS allows is sent again as a fresh
// message instead, so SQS never moves an unfinished event to the DLQ behind
// the processor's back.
//
// Each invocation keeps to its deadline: a message is started only while
// the remaining time exceeds the per-message budget, its effects must end
// a reserve before the deadline (so the outcome is always written), and
// the messages not started go back at once with a short visibility. A
// panic in the business code fails that event alone, with the panic text.
//
// An unfinished event whose payload is missing is fetched from its
// provider's API (Config.Fetch) and stored back before it is run. A
// notification that only points at the event (GoPay's id, a Stripe thin
// event: provider.Fetch.Pointer) is fetched on every attempt.
//
// One bad message never fails the batch (partial batch responses). The
// id-only providers' messages of a batch run in a lane of their own, so
// made-up ids never hold the other providers' slots. A Handler is safe
// for concurrent use.
package processor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	mathrand "math/rand/v2"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Defaults of Config, for the template's processor (Timeout 30 s, events
// queue VisibilityTimeout 180 s): see Timing.
const (
	DefaultLeaseFor = 45 * time.Second
	DefaultBudget   = 10 * time.Second
	DefaultReserve  = 2 * time.Second
)

// Config tunes a Handler; zero fields take their defaults.
type Config struct {
	// LeaseFor is how long a lease lasts: the function timeout plus a
	// margin, and less than the events queue's visibility timeout (Timing
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
	// RetrySoon is the visibility of a message the invocation had no time
	// to start (plus up to as much again of jitter). Default 1 s.
	RetrySoon time.Duration
	// LeaseJitter is the most added to a lease's end when a message is put
	// back until then, so copies do not all come back at once. Default 2 s.
	LeaseJitter time.Duration
	// BackoffBase and BackoffMax bound the visibility delay after a
	// transient failure: a random time in [0, min(Max, Base·2^(attempt-1))];
	// after the n-th failure of the infrastructure one in
	// [ceiling/2, ceiling] with ceiling = min(Max, Base·2^(n-1)), so it
	// grows. Defaults 10 s and 15 min; Max is at most 15 min, the longest
	// delay SQS gives a message sent again on its last receive.
	BackoffBase, BackoffMax time.Duration
	// MaxInfraFailures is how many attempts of an event may fail because
	// the infrastructure was unavailable before the event is parked with
	// the last such reason. Default DefaultMaxInfraFailures.
	MaxInfraFailures int
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
	// (provider.Webhook.IDOnly), whose ids anyone can make up: their
	// messages run in a lane of their own in every batch, and a fetch
	// their provider answers "not found" (provider.ErrNotFound) is never
	// parked.
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
	// runs (ErrOtherMode). A provider not listed is not checked.
	Live map[string]bool
	// NotFoundHold replaces NotFoundWindow for an id its provider did not
	// know at this claim only: the fetch error counts the provider's "not
	// found" answers (NotFoundCounter) and there were no more than
	// NotFoundTries, so a provider whose API lags its notification is
	// fetched again at its next notification after this short hold. Default
	// DefaultNotFoundHold.
	NotFoundHold time.Duration
	Now          func() time.Time
	// Jitter returns a number in [0, 1); default math/rand/v2.
	Jitter func() float64
	// Metrics records Processed, Ignored, Failed, Parked, LeaseTakeovers,
	// EffectDuration and EndToEndAge; nil records nothing.
	Metrics *metrics.Recorder
}

// NotFoundCounter is implemented by a provider.Fetch's not-found error that
// counts the provider's "not found" answers for the object over claims,
// this one included (GoPay's watch list of unknown ids).
type NotFoundCounter interface {
	NotFoundCount() int
}

// Defaults of Config.NotFoundTries, Config.NotFoundWindow and
// Config.NotFoundHold.
const (
	DefaultNotFoundTries  = 2
	DefaultNotFoundWindow = 15 * time.Minute
	DefaultNotFoundHold   = 10 * time.Second
)

func (c Config) withDefaults() Config {
	if c.LeaseFor <= 0 {
		c.LeaseFor = DefaultLeaseFor
	}
	if c.MaxReceiveCount <= 0 {
		c.MaxReceiveCount = 5
	}
	if c.Budget <= 0 {
		c.Budget = DefaultBudget
	}
	if c.Reserve <= 0 {
		c.Reserve = DefaultReserve
	}
	if c.HeldWait <= 0 {
		c.HeldWait = c.Budget / 2
	}
	if c.RetrySoon <= 0 {
		c.RetrySoon = time.Second
	}
	if c.LeaseJitter <= 0 {
		c.LeaseJitter = 2 * time.Second
	}
	if c.BackoffBase <= 0 {
		c.BackoffBase = 10 * time.Second
	}
	if c.BackoffMax <= 0 {
		c.BackoffMax = 15 * time.Minute
	}
	if c.MaxInfraFailures <= 0 {
		c.MaxInfraFailures = DefaultMaxInfraFailures
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 4
	}
	if c.NotFoundTries <= 0 {
		c.NotFoundTries = DefaultNotFoundTries
	}
	if c.NotFoundWindow <= 0 {
		c.NotFoundWindow = DefaultNotFoundWindow
	}
	if c.NotFoundHold <= 0 {
		c.NotFoundHold = DefaultNotFoundHold
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
// error (webhook.Permanent), or any other error to be retried. A panic is
// recovered and counts as an error to retry.
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
}

// ledger hands out the effect runner of one event.
type ledger interface {
	For(key webhook.Key) effects.Runner
}

// eventsQueue puts a message back: hidden for a while (Delay), or, on its
// last receive, as a fresh message sent after a delay (SendAfter).
type eventsQueue interface {
	Delay(ctx context.Context, receiptHandle string, d time.Duration) error
	SendAfter(ctx context.Context, env webhook.Envelope, d time.Duration) error
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

// Handle processes one batch and reports the messages to retry. With a
// deadline on ctx (Lambda's), it starts a message only while at least
// Budget remains and gives its effects the deadline minus Reserve; the
// messages it does not start go back with a short visibility.
func (h *Handler) Handle(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
	var (
		mu         sync.Mutex
		failures   []events.SQSBatchItemFailure
		notStarted int
		wg         sync.WaitGroup
	)
	fail := func(msg events.SQSMessage) {
		mu.Lock()
		failures = append(failures, events.SQSBatchItemFailure{ItemIdentifier: msg.MessageId})
		mu.Unlock()
	}
	deadline, bounded := ctx.Deadline()
	if bounded && time.Until(deadline) > h.cfg.LeaseFor {
		h.log.Error("the invocation outlasts the lease: set LEASE_DURATION above the function timeout",
			"lease", h.cfg.LeaseFor.String(), "remaining", time.Until(deadline).Round(time.Millisecond).String())
	}
	// lane starts msgs, Concurrency at a time.
	lane := func(msgs []events.SQSMessage) {
		slots := make(chan struct{}, h.cfg.Concurrency)
		for _, msg := range msgs {
			slots <- struct{}{}
			if bounded && time.Until(deadline) < h.cfg.Budget {
				<-slots
				mu.Lock()
				notStarted++
				mu.Unlock()
				if h.notStarted(ctx, msg) {
					fail(msg)
				}
				continue
			}
			wg.Add(1)
			go func(msg events.SQSMessage) {
				defer func() { <-slots; wg.Done() }()
				if h.guarded(ctx, msg) {
					fail(msg)
				}
			}(msg)
		}
	}
	// Id-only notifications (GoPay) run in a lane of their own: made-up
	// ids, which anyone can send, never take the other providers' slots.
	others, idOnly := h.lanes(batch.Records)
	var lanes sync.WaitGroup
	lanes.Add(1)
	go func() { defer lanes.Done(); lane(idOnly) }()
	lane(others)
	lanes.Wait()
	wg.Wait()
	if notStarted > 0 {
		h.log.Warn("messages not started: too little time left in the invocation; they come back shortly",
			"not_started", notStarted, "budget", h.cfg.Budget.String())
	}
	return events.SQSEventResponse{BatchItemFailures: failures}, nil
}

// lanes splits a batch into the id-only providers' messages
// (Config.IDOnly) and the others, each in batch order.
func (h *Handler) lanes(msgs []events.SQSMessage) (others, idOnly []events.SQSMessage) {
	for _, msg := range msgs {
		if env, err := webhook.ParseEnvelope(msg.Body); err == nil && h.cfg.IDOnly[env.Key.Provider()] {
			idOnly = append(idOnly, msg)
			continue
		}
		others = append(others, msg)
	}
	return others, idOnly
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

// notStarted puts back a message the invocation has no time for.
func (h *Handler) notStarted(ctx context.Context, msg events.SQSMessage) (retry bool) {
	log := h.log.With("message_id", msg.MessageId, "receive_count", msg.Attributes["ApproximateReceiveCount"])
	env, err := webhook.ParseEnvelope(msg.Body)
	if err != nil {
		env = webhook.Envelope{} // the next receive parks it
	}
	soon := ceilSecond(h.cfg.RetrySoon + time.Duration(h.cfg.Jitter()*float64(h.cfg.RetrySoon)))
	return h.later(ctx, log, msg, env, soon)
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
		log.Error("unreadable message parked", "reason", logs.RedactError(err))
		if perr := h.park(ctx, log, msg.Body, webhook.Envelope{}, err, 0); perr != nil {
			return true
		}
		h.cfg.Metrics.Emit(metrics.Dims{}, metrics.Counted(metrics.Parked, 1))
		return false
	}
	log = log.With("key", env.Key.String(), "type", env.Type)
	// The effects end Reserve before the invocation's deadline; the ledger
	// and the lease get half of Reserve more, and the outcome is written
	// with ctx in the rest.
	work, effectsBy := ctx, time.Time{}
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		work, cancel = context.WithDeadline(ctx, deadline.Add(-h.cfg.Reserve/2))
		defer cancel()
		effectsBy = deadline.Add(-h.cfg.Reserve)
	}
	owner := h.instance + "/" + msg.MessageId
	waitUntil := time.Now().Add(h.cfg.HeldWait)
	for tries := 0; ; tries++ {
		it, err := h.store.Lease(work, env.Key, owner, h.cfg.Now(), h.cfg.LeaseFor)
		switch {
		case errors.Is(err, inbox.ErrFinished):
			log.Info("already finished; acknowledged", "status", string(it.Status))
			return false
		case errors.Is(err, inbox.ErrLeaseHeld):
			// Usually a duplicate whose twin is running right now: wait a
			// moment for it; otherwise come back when its lease ends.
			it = h.awaitHolder(work, env.Key, it, waitUntil)
			switch {
			case it.Status.Final():
				log.Info("the lease holder finished it; acknowledged", "status", string(it.Status))
				return false
			case it.Status == inbox.Failed:
				// The holder's own message retries it after its backoff.
				d := h.backoff(it.Attempts)
				log.Info("the lease holder failed it; this copy comes back after a backoff", "retry_in", d.String())
				return h.later(ctx, log, msg, env, d)
			case heldBy(it, h.cfg.Now()) || tries >= 2:
				d := ceilSecond(it.LeaseUntil.Sub(h.cfg.Now()) + time.Duration(h.cfg.Jitter()*float64(h.cfg.LeaseJitter)))
				log.Info("another worker holds the lease; back when it ends", "lease_until", it.LeaseUntil, "retry_in", d.String())
				return h.later(ctx, log, msg, env, d)
			}
			continue // the lease ended without an outcome (a dead holder): take it over
		case errors.Is(err, inbox.ErrNotFound):
			log.Warn("no claim for this message (expired or released); acknowledged")
			return false
		case err != nil && infrastructure(err):
			// The inbox store is unavailable: nothing ran, so the event's
			// tries are untouched; come back after a growing backoff.
			receives, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
			d := h.infraBackoff(receives)
			log.Warn("lease failed: the inbox store is unavailable; back after a backoff", "retry_in", d.String(), "reason", err.Error())
			h.cfg.Metrics.Emit(metrics.Dims{Provider: env.Key.Provider(), EventType: env.Type}, metrics.Counted(metrics.Failed, 1))
			return h.later(ctx, log, msg, env, d)
		case err != nil && work.Err() != nil:
			// The invocation's time ran out during the call: nothing was
			// refused. Back shortly, as a message not started.
			log.Warn("lease cut short by the invocation's deadline; back shortly", "reason", err.Error())
			return h.notStarted(ctx, msg)
		case err != nil:
			return h.leaseRefused(ctx, log, env, owner, err)
		}
		if it.TakenFrom != "" {
			log.Warn("took over a lease that ran out", "from", it.TakenFrom, "attempts", it.Attempts)
			h.cfg.Metrics.Emit(metrics.Dims{Provider: env.Key.Provider(), EventType: env.Type}, metrics.Counted(metrics.LeaseTakeovers, 1))
		}
		err = h.run(work, effectsBy, log, env.Key, it)
		return h.finish(ctx, log, msg, env, owner, it, err)
	}
}

// leaseRefused parks an event whose lease failed for a reason waiting
// does not change: the inbox store refused the request itself (access
// denied, a validation error) or returned an item that cannot be decoded.
// Like any permanent error it goes to the DLQ at once with the reason, so
// the DLQ alarm fires and a person reads why, instead of going back to
// SQS until its redrive moves it without one. The claim is marked DEAD
// only if the lease was taken (an undecodable item is leased, then
// unreadable): Finish writes nothing without it. A claim never leased
// stays pending, so once the store lets the processor in again (an IAM
// change that had not reached it yet) the reconciler re-enqueues it after
// STUCK_AFTER, or a replay does sooner.
func (h *Handler) leaseRefused(ctx context.Context, log *slog.Logger, env webhook.Envelope, owner string, err error) (retry bool) {
	err = fmt.Errorf("could not lease the event in the inbox: %w", err)
	reason := logs.RedactError(err)
	log.Error("lease refused by the inbox store; parked", "reason", reason)
	if perr := h.park(ctx, log, env.Marshal(), env, err, 0); perr != nil {
		return true
	}
	h.cfg.Metrics.Emit(metrics.Dims{Provider: env.Key.Provider(), EventType: env.Type}, metrics.Counted(metrics.Parked, 1))
	res := inbox.Result{Status: inbox.Dead, Outcome: "parked in DLQ", Error: reason, At: h.cfg.Now()}
	if _, ferr := h.store.Finish(ctx, env.Key, owner, res); ferr != nil {
		log.Warn("the claim is not marked DEAD: no lease was taken, or the item could not be read back", "reason", ferr.Error())
	}
	return false
}

// heldBy reports whether it is under a live lease at now.
func heldBy(it inbox.Item, now time.Time) bool {
	return it.Status == inbox.Processing && it.LeaseUntil.After(now)
}

// awaitHolder polls the event until no live lease holds it, until
// waitUntil, or until ctx ends, and returns what it saw last.
func (h *Handler) awaitHolder(ctx context.Context, key webhook.Key, it inbox.Item, waitUntil time.Time) inbox.Item {
	if deadline, ok := ctx.Deadline(); ok && deadline.Before(waitUntil) {
		waitUntil = deadline
	}
	pause := 50 * time.Millisecond
	for heldBy(it, h.cfg.Now()) && time.Now().Add(pause).Before(waitUntil) {
		select {
		case <-ctx.Done():
			return it
		case <-time.After(pause):
		}
		got, err := h.store.Get(ctx, key)
		if err != nil {
			return it
		}
		it = got
		pause = min(2*pause, time.Second)
	}
	return it
}

// later puts the message back for d. On the last receive SQS allows, a
// message returned as a failure would be moved to the DLQ at its next
// receive, unprocessed and without a reason: it is sent again as a fresh
// message instead, and this one acknowledged.
func (h *Handler) later(ctx context.Context, log *slog.Logger, msg events.SQSMessage, env webhook.Envelope, d time.Duration) (retry bool) {
	receives, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	if receives >= h.cfg.MaxReceiveCount && env.Key != "" {
		err := h.events.SendAfter(ctx, env, d)
		if err == nil {
			log.Info("last receive: sent again as a fresh message", "send_in", d.String())
			return false
		}
		log.Error("last receive: could not send the message again", "reason", err.Error())
	}
	if err := h.events.Delay(ctx, msg.ReceiptHandle, d); err != nil {
		log.Warn("could not set the message's visibility; SQS's visibility timeout applies", "reason", err.Error())
	}
	return true
}

// run rebuilds the verified event from the inbox and runs the business on it.
// Its effect calls must end by effectsBy (zero: no deadline of their own).
func (h *Handler) run(ctx context.Context, effectsBy time.Time, log *slog.Logger, key webhook.Key, it inbox.Item) (err error) {
	if err := h.checkMode(key, it); err != nil {
		return err
	}
	raw, err := h.payload(ctx, log, key, it)
	if err != nil {
		return err
	}
	ev := webhook.Event{
		Provider: key.Provider(),
		ID:       key.EventID(),
		Type:     it.EventType,
		Created:  it.Created,
		Livemode: it.Livemode,
		Raw:      raw,
	}
	defer func() {
		if r := recover(); r != nil {
			log.Error("business code panicked", "panic", logs.RedactEmails(fmt.Sprint(r)), "stack", string(debug.Stack()))
			err = fmt.Errorf("business code panicked: %v", r)
		}
	}()
	var fx effects.Runner = timedRunner{h.ledger.For(key), h.cfg.Metrics}
	if !effectsBy.IsZero() {
		fx = deadlineRunner{fx, effectsBy}
	}
	if deadline, ok := ctx.Deadline(); ok {
		// An effect that has run is recorded with retries until the
		// ledger's share of the reserve is used up, whatever context the
		// business hands the ledger.
		ctx = effects.WithRecordDeadline(ctx, deadline)
	}
	return h.business.Handle(ctx, ev, fx)
}

// payload returns the event's stored payload (the one the leased item
// carries inline, or its payload item's) or, when none is stored, the one
// its provider's API serves, which it stores for the next attempt. A
// stored notification that only points at the event (Config.Fetch) is
// fetched, fresh on every attempt: its state is what the API says now.
func (h *Handler) payload(ctx context.Context, log *slog.Logger, key webhook.Key, it inbox.Item) ([]byte, error) {
	stored := it.Payload // inline: no read
	if stored == nil {
		raw, err := h.store.Payload(ctx, key)
		switch {
		case err == nil:
			stored = raw
		case !errors.Is(err, inbox.ErrNotFound):
			return nil, fmt.Errorf("load payload: %w", err) // transient
		}
	}
	f := h.cfg.Fetch[key.Provider()]
	fetch, canFetch := f.Get, f.Get != nil
	if f.Pointer != nil && f.Pointer(stored) {
		if !canFetch {
			return nil, webhook.Permanent(fmt.Errorf("%s notifies with a pointer and has no API fetch", key.Provider()))
		}
		raw, err := fetch(ctx, key.EventID(), stored)
		if err != nil {
			return nil, fmt.Errorf("fetch %s from the provider's API: %w", key, err)
		}
		log.Info("fetched the event the notification points at from the provider's API")
		return raw, nil
	}
	if stored != nil {
		return stored, nil
	}
	if !canFetch {
		return nil, fmt.Errorf("load payload: none stored and no API fetch for provider %q: %w", key.Provider(), inbox.ErrNotFound)
	}
	raw, err := fetch(ctx, key.EventID(), nil)
	if err != nil {
		return nil, fmt.Errorf("no payload stored; fetch %s from the provider's API: %w", key, err)
	}
	log.Warn("no payload stored; fetched the event from the provider's API")
	if err := h.store.PutPayload(ctx, it, raw); err != nil {
		log.Warn("could not store the fetched payload; the next attempt fetches it again", "reason", err.Error())
	}
	return raw, nil
}

// finish classifies err, once, and writes the outcome.
func (h *Handler) finish(ctx context.Context, log *slog.Logger, msg events.SQSMessage, env webhook.Envelope, owner string, it inbox.Item, err error) (retry bool) {
	now := h.cfg.Now()
	// Parked by the processor, with its reason, on the last receive SQS
	// allows once the event has had its tries; receives that ran nothing
	// (a live lease met, no time left) do not count as tries.
	// An attempt the infrastructure failed is counted apart
	// (InfraFailures) and bounded by MaxInfraFailures instead.
	receives, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	infra := err != nil && !errors.Is(err, webhook.ErrNoHandler) && infrastructure(err)
	tries := it.Attempts - it.InfraFailures // this attempt included
	infraFailures := it.InfraFailures
	if infra {
		infraFailures++
		if infraFailures >= h.cfg.MaxInfraFailures {
			err = fmt.Errorf("the infrastructure failed %d attempts; the last: %w", infraFailures, err)
		}
	}
	exhausted := !infra && receives >= h.cfg.MaxReceiveCount && tries >= h.cfg.MaxReceiveCount
	infraExhausted := infra && infraFailures >= h.cfg.MaxInfraFailures
	var res inbox.Result
	notFoundRetry := false
	reason := logs.RedactError(err) // what is recorded: last_error, the DLQ reason, the log line
	switch {
	case err == nil:
		res = inbox.Result{Status: inbox.Done, Outcome: "effects done", At: now}
	case errors.Is(err, webhook.ErrNoHandler):
		res = inbox.Result{Status: inbox.Ignored, Outcome: "no handler for " + env.Type, At: now}
	case errors.Is(err, ErrOtherMode):
		res = inbox.Result{Status: inbox.Ignored, Outcome: reason, At: now}
	case errors.Is(err, provider.ErrNotFound) && tries < h.cfg.NotFoundTries && !h.notFoundBefore(err):
		res = inbox.Result{Status: inbox.Failed, Error: reason, At: now}
		notFoundRetry = true
	case errors.Is(err, provider.ErrNotFound):
		// Anyone can make up an id: the event is not parked (no alarm),
		// and the claim's condition keeps its repeats from being fetched
		// for the window.
		res = inbox.Result{Status: inbox.Ignored, Outcome: "not found at " + env.Key.Provider(), Error: reason, At: now,
			RenewAfter: now.Add(h.notFoundHold(err))}
	case webhook.IsPermanent(err) || exhausted || infraExhausted:
		if perr := h.park(ctx, log, env.Marshal(), env, err, it.Attempts); perr != nil {
			res = inbox.Result{Status: inbox.Failed, Error: reason, At: now, Infrastructure: infra}
			break
		}
		res = inbox.Result{Status: inbox.Dead, Outcome: "parked in DLQ", Error: reason, At: now, Infrastructure: infra}
	default:
		res = inbox.Result{Status: inbox.Failed, Error: reason, At: now, Infrastructure: infra}
	}
	if _, ferr := h.store.Finish(ctx, env.Key, owner, res); ferr != nil {
		log.Error("could not record the outcome", "status", string(res.Status), "reason", ferr.Error())
		if infrastructure(ferr) {
			// The store is unavailable; the lease stays until it ends.
			// Come back after a growing backoff, and no sooner than the
			// lease's end, so the next receive can take it over.
			d := max(h.infraBackoff(infraFailures+1), ceilSecond(it.LeaseUntil.Sub(h.cfg.Now())))
			return h.later(ctx, log, msg, env, d)
		}
		// Lease lost: a new owner runs the event; the ledger keeps it from
		// repeating what we finished. Let the message come back.
		return true
	}
	if notFoundRetry {
		// Not a failure of ours (anyone can make an id up): no Failed
		// count for the processor-errors alarm, no warning.
		delay := h.backoff(tries)
		log.Info("not found at the provider; fetched once more after a backoff", "attempts", it.Attempts, "retry_in", delay.String(), "reason", res.Error)
		return h.later(ctx, log, msg, env, delay)
	}
	h.count(env, it, res)
	if errors.Is(err, ErrOtherMode) {
		h.cfg.Metrics.Emit(metrics.Dims{Provider: env.Key.Provider(), EventType: env.Type}, metrics.Counted(metrics.OtherMode, 1))
	}
	if res.Status != inbox.Failed {
		log.Info("event "+string(res.Status), "attempts", it.Attempts, "reason", res.Error)
		return false
	}
	if infra {
		delay := h.infraBackoff(infraFailures)
		log.Warn("event FAILED: the infrastructure is unavailable; will retry, its tries untouched",
			"attempts", it.Attempts, "infra_failures", infraFailures, "retry_in", delay.String(), "reason", res.Error)
		return h.later(ctx, log, msg, env, delay)
	}
	delay := h.backoff(tries)
	log.Warn("event FAILED; will retry", "attempts", it.Attempts, "retry_in", delay.String(), "reason", res.Error)
	return h.later(ctx, log, msg, env, delay)
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
	if perr := h.dlq.Park(ctx, body, env, logs.RedactError(err), attempts, h.cfg.Now()); perr != nil {
		log.Error("could not park in the DLQ; retry", "reason", perr.Error())
		return perr
	}
	return nil
}

// backoff returns the visibility delay after the attempt-th failure:
// full jitter over an exponential ceiling.
func (h *Handler) backoff(attempt int) time.Duration {
	d := time.Duration(h.cfg.Jitter() * float64(h.ceiling(attempt)))
	if d < time.Second {
		d = time.Second
	}
	return d
}

// infraBackoff returns the visibility delay after the n-th failure of the
// infrastructure: a random time in the upper half of the exponential
// ceiling, so every wait is longer than the last until BackoffMax, and
// copies do not all come back at once.
func (h *Handler) infraBackoff(n int) time.Duration {
	ceiling := h.ceiling(n)
	return ceilSecond(ceiling/2 + time.Duration(h.cfg.Jitter()*float64(ceiling/2)))
}

// ceiling returns min(BackoffMax, BackoffBase·2^(n-1)).
func (h *Handler) ceiling(n int) time.Duration {
	ceiling := h.cfg.BackoffMax
	if n < 1 {
		n = 1
	}
	if n <= 30 {
		if c := h.cfg.BackoffBase << (n - 1); c > 0 && c < ceiling {
			ceiling = c
		}
	}
	return ceiling
}

// ceilSecond rounds d up to whole seconds, at least one: SQS counts
// visibility in seconds, and a message must not come back before d.
func ceilSecond(d time.Duration) time.Duration {
	if d < time.Second {
		return time.Second
	}
	if r := d % time.Second; r != 0 {
		d += time.Second - r
	}
	return d
}

// notFoundBefore reports whether err, a not-found error, says the provider
// did not know the object at an earlier claim either: its count of "not
// found" answers is above one claim's NotFoundTries.
func (h *Handler) notFoundBefore(err error) bool {
	var c NotFoundCounter
	return errors.As(err, &c) && c.NotFoundCount() > h.cfg.NotFoundTries
}

// notFoundHold is how long notifications of an object its provider did not
// know are duplicates: NotFoundHold after the first claim of an id whose
// fetcher counts its "not found" answers, NotFoundWindow otherwise.
func (h *Handler) notFoundHold(err error) time.Duration {
	var c NotFoundCounter
	if errors.As(err, &c) && !h.notFoundBefore(err) {
		return h.cfg.NotFoundHold
	}
	return h.cfg.NotFoundWindow
}

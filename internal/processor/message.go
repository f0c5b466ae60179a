package processor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

// job is one message being processed.
type job struct {
	msg      events.SQSMessage
	env      queue.Envelope // zero when the body is not an envelope
	log      *slog.Logger
	owner    string // the lease owner: this process and message
	receives int    // the message's ApproximateReceiveCount
}

// newJob reads msg: its envelope, the trace it carries on (what this
// message sends, a park in the DLQ, carries it on too), and the logger
// that names them. err says the body is not an envelope.
func (h *Handler) newJob(ctx context.Context, msg events.SQSMessage) (context.Context, *job, error) {
	receives, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	log := h.log.With("message_id", msg.MessageId, "receive_count", msg.Attributes["ApproximateReceiveCount"])
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		log = log.With("request_id", lc.AwsRequestID)
	}
	if trace := msg.Attributes[queue.AttrTrace]; trace != "" {
		ctx = queue.WithTrace(ctx, trace)
		log = log.With("trace_id", queue.TraceRoot(trace))
	}
	j := &job{msg: msg, log: log, owner: h.instance + "/" + msg.MessageId, receives: receives}
	env, err := queue.ParseEnvelope(msg.Body)
	if err != nil {
		return ctx, j, err
	}
	j.env, j.log = env, log.With("key", env.Key.String(), "type", env.Type)
	return ctx, j, nil
}

// message processes one message and reports whether SQS should deliver it
// again: lease, run, then apply what decide makes of the attempt.
func (h *Handler) message(ctx context.Context, msg events.SQSMessage) (retry bool) {
	ctx, j, err := h.newJob(ctx, msg)
	if err != nil {
		return h.unreadable(ctx, j, err)
	}
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
	it, leased, retry := h.lease(ctx, work, j)
	if !leased {
		return retry
	}
	err = h.indexClaim(work, it)
	if err == nil {
		err = h.run(work, effectsBy, j.log, j.env.Key, it)
	}
	return h.apply(ctx, j, attempt{err: err, item: it, receives: j.receives, rounds: j.env.Rounds, eventType: j.env.Type,
		provider: j.env.Key.Provider(), now: h.cfg.Now(), jitter: h.cfg.Jitter(), indexed: !errors.Is(err, errUnindexed)})
}

// unreadable parks a message that is not an envelope as it is, for a
// person: it is not ours to interpret.
func (h *Handler) unreadable(ctx context.Context, j *job, err error) (retry bool) {
	reason := logs.RedactError(err)
	j.log.Error("unreadable message parked", "reason", reason)
	if perr := h.park(ctx, j.log, j.msg.Body, queue.Envelope{}, reason, 0); perr != nil {
		return true
	}
	h.cfg.Metrics.Emit(metrics.Dims{}, metrics.Counted(metrics.Parked, 1))
	return false
}

// lease takes the event's lease for j, waiting a moment for a live holder
// and taking over a lease that ended without an outcome. Without the lease
// (leased false), retry says whether SQS should deliver the message again.
func (h *Handler) lease(ctx, work context.Context, j *job) (it inbox.Item, leased, retry bool) {
	waitUntil := time.Now().Add(h.cfg.HeldWait)
	for tries := 0; ; tries++ {
		it, err := h.store.Lease(work, j.env.Key, j.owner, h.cfg.Now(), h.cfg.LeaseFor)
		switch {
		case err == nil:
			h.tookOver(j, it)
			return it, true, false
		case errors.Is(err, inbox.ErrLeaseHeld), errors.Is(err, inbox.ErrLeaseRaced):
			// Usually a duplicate whose twin is running right now, or
			// has just finished an attempt (raced): never parked.
			it = h.awaitHolder(work, j.env.Key, it, waitUntil)
			if retry, again := h.held(ctx, j, it, tries); !again {
				return it, false, retry
			}
		default:
			return it, false, h.leaseFailed(ctx, work, j, it, err)
		}
	}
}

// tookOver notes a lease taken over from a holder whose lease ran out.
func (h *Handler) tookOver(j *job, it inbox.Item) {
	if it.TakenFrom == "" {
		return
	}
	j.log.Warn("took over a lease that ran out", "from", it.TakenFrom, "attempts", it.Attempts)
	h.cfg.Metrics.Emit(metrics.Dims{Provider: j.env.Key.Provider(), EventType: j.env.Type}, metrics.Counted(metrics.LeaseTakeovers, 1))
}

// held puts back a message whose event another worker holds, as it was
// last seen (it), until that worker is done; again is true when the lease
// ended without an outcome (a dead holder), so it is taken over. A lease
// still refused on the last receive while the event reads back leasable
// is parked (leaseRefused).
func (h *Handler) held(ctx context.Context, j *job, it inbox.Item, tries int) (retry, again bool) {
	switch {
	case it.Status.Final():
		j.log.Info("the lease holder finished it; acknowledged", "status", string(it.Status))
		return false, false
	case it.Status == inbox.Failed:
		// The holder's own message retries it after its backoff.
		d := h.cfg.backoff(it.Attempts, h.cfg.Jitter())
		j.log.Info("the lease holder failed it; this copy comes back after a backoff", "retry_in", d.String())
		return h.later(ctx, j, d), false
	case tries >= 2 && !heldBy(it, h.cfg.Now()) && j.receives >= h.cfg.MaxReceiveCount:
		// Refused on every try up to the last receive SQS allows, while
		// the event reads back leasable: no race lasts that long.
		err := fmt.Errorf("refused on every try of %d receives, yet it reads back %s: %w", j.receives, cmp.Or(string(it.Status), "unreadable"), inbox.ErrLeaseRaced)
		return h.leaseRefused(ctx, j, err), false
	case heldBy(it, h.cfg.Now()) || tries >= 2:
		d := ceilSecond(it.LeaseUntil.Sub(h.cfg.Now()) + time.Duration(h.cfg.Jitter()*float64(leaseJitter)))
		j.log.Info("another worker holds the lease; back when it ends", "lease_until", it.LeaseUntil, "retry_in", d.String())
		return h.later(ctx, j, d), false
	}
	return false, true
}

// leaseFailed handles a lease the store did not give for a reason other
// than another holder.
func (h *Handler) leaseFailed(ctx, work context.Context, j *job, it inbox.Item, err error) (retry bool) {
	switch {
	case errors.Is(err, inbox.ErrFinished):
		j.log.Info("already finished; acknowledged", "status", string(it.Status))
		return false
	case errors.Is(err, inbox.ErrNotFound):
		j.log.Warn("no claim for this message (expired or released); acknowledged")
		return false
	case infrastructure(err):
		// The inbox store is unavailable: nothing ran, so the event's
		// tries are untouched; come back after a growing backoff.
		d := h.cfg.infraBackoff(j.receives, h.cfg.Jitter())
		j.log.Warn("lease failed: the inbox store is unavailable; back after a backoff", "retry_in", d.String(), "reason", err.Error())
		h.cfg.Metrics.Emit(metrics.Dims{Provider: j.env.Key.Provider(), EventType: j.env.Type}, metrics.Counted(metrics.Failed, 1))
		return h.later(ctx, j, d)
	case work.Err() != nil:
		// The invocation's time ran out during the call: nothing was
		// refused. Back shortly, as a message not started.
		j.log.Warn("lease cut short by the invocation's deadline; back shortly", "reason", err.Error())
		return h.notStarted(ctx, j.msg)
	}
	return h.leaseRefused(ctx, j, err)
}

// leaseRefused parks an event whose lease failed for a reason waiting
// does not change: the inbox store refused the request itself (access
// denied, a validation error) or returned an item that cannot be decoded.
// It goes to the DLQ at once with the reason, so the DLQ alarm fires,
// instead of going back to SQS until its redrive moves it without one.
// The claim is marked DEAD only if the lease was taken (an undecodable
// item is leased, then unreadable). A claim never leased stays pending:
// the reconciler re-enqueues it after STUCK_AFTER, or a replay does sooner.
func (h *Handler) leaseRefused(ctx context.Context, j *job, err error) (retry bool) {
	reason := logs.RedactError(fmt.Errorf("could not lease the event in the inbox: %w", err))
	j.log.Error("lease refused by the inbox store; parked", "reason", reason)
	if perr := h.park(ctx, j.log, j.env.Marshal(), j.env, reason, 0); perr != nil {
		return true
	}
	h.cfg.Metrics.Emit(metrics.Dims{Provider: j.env.Key.Provider(), EventType: j.env.Type}, metrics.Counted(metrics.Parked, 1))
	res := inbox.Result{Status: inbox.Dead, Outcome: "parked in DLQ", Error: reason, At: h.cfg.Now()}
	if _, ferr := h.store.Finish(ctx, j.env.Key, j.owner, res); ferr != nil {
		j.log.Warn("the claim is not marked DEAD: no lease was taken, or the item could not be read back", "reason", ferr.Error())
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

// notStarted puts back a message the invocation has no time for.
func (h *Handler) notStarted(ctx context.Context, msg events.SQSMessage) (retry bool) {
	ctx, j, _ := h.newJob(ctx, msg) // an unreadable message is parked at its next receive
	soon := ceilSecond(retrySoon + time.Duration(h.cfg.Jitter()*float64(retrySoon)))
	return h.later(ctx, j, soon)
}

// later puts the message back for d. On the last receive SQS allows, a
// message returned as a failure would be moved to the DLQ at its next
// receive, unprocessed and without a reason: it is sent again as a fresh
// message instead, and this one acknowledged.
func (h *Handler) later(ctx context.Context, j *job, d time.Duration) (retry bool) {
	if j.receives >= h.cfg.MaxReceiveCount && j.env.Key != "" {
		env := j.env
		env.Rounds++
		err := h.events.SendAfter(ctx, env, d)
		if err == nil {
			j.log.Info("last receive: sent again as a fresh message", "send_in", d.String())
			return false
		}
		j.log.Error("last receive: could not send the message again", "reason", err.Error())
	}
	if err := h.events.Delay(ctx, j.msg.ReceiptHandle, d); err != nil {
		j.log.Warn("could not set the message's visibility; SQS's visibility timeout applies", "reason", err.Error())
	}
	return true
}

// run rebuilds the verified event from the inbox and runs the business on it.
// Its effect calls must end by effectsBy (zero: no deadline of their own).
func (h *Handler) run(ctx context.Context, effectsBy time.Time, log *slog.Logger, key webhook.Key, it inbox.Item) (err error) {
	if it.PayloadRemoved != "" {
		return fmt.Errorf("%s: payload %s at %s: %w", key, it.PayloadRemoved, it.RemovedAt.Format(time.RFC3339), inbox.ErrRemoved)
	}
	if err := h.checkMode(key, it); err != nil {
		return err
	}
	raw, fetched, err := h.payload(ctx, log, key, it)
	if err != nil {
		return err
	}
	ev := webhook.Event{Provider: key.Provider(), ID: key.EventID(), Type: h.eventType(key, it, raw), Created: it.Created, Livemode: it.Livemode, Received: it.ReceivedAt, Raw: raw}
	if fetched {
		if err := h.index(ctx, log, ev, it); err != nil {
			return err
		}
	}
	defer func() {
		if r := recover(); r != nil {
			log.Error("business code panicked", "panic", logs.RedactEmails(fmt.Sprint(r)), "stack", string(debug.Stack()))
			err = fmt.Errorf("business code panicked: %v", r)
		}
	}()
	mw := []middleware{timed(h.cfg.Metrics)}
	if !effectsBy.IsZero() {
		mw = []middleware{notAfter(effectsBy), timed(h.cfg.Metrics)}
	}
	if deadline, ok := ctx.Deadline(); ok {
		// An effect that has run is recorded with retries until the
		// ledger's share of the reserve is used up, whatever context the
		// business hands the ledger.
		ctx = ledger.WithRecordDeadline(ctx, deadline)
	}
	return h.business.Handle(ctx, ev, withMiddleware(h.ledger.For(key), mw...))
}

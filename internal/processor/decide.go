package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// attempt is what one attempt of an event came to: decide's input.
type attempt struct {
	err        error      // what loading the payload and running the business returned
	item       inbox.Item // the event as leased: Attempts counts this attempt
	receives   int        // the message's ApproximateReceiveCount
	rounds     int        // the times the message was sent again fresh on a last receive (queue.Envelope.Rounds)
	eventType  string
	provider   string
	now        time.Time
	jitter     float64 // in [0, 1): the backoff's draw
	parkFailed bool    // the DLQ refused the event an earlier decision parked
	indexed    bool    // the claim's subjects are indexed (inbox.Result.Indexed)
}

// decision is what becomes of an event and its message after an attempt.
type decision struct {
	result        inbox.Result  // the outcome Finish writes, giving up the lease
	park          bool          // park the event in the DLQ with result.Error first
	retryIn       time.Duration // the message comes back after it; zero: acknowledged
	uncounted     bool          // no metric: a not-found id is no failure of ours
	infraFailures int           // the event's infrastructure failures, this attempt's included
	level         slog.Level
	note          string // the log line
}

// decide classifies an attempt's error, once, and says what becomes of
// the event and its message. It reads nothing but a and c.
func (c Config) decide(a attempt) decision {
	f := c.facts(a)
	reason := logs.RedactError(f.err) // last_error, the DLQ reason, the log line
	switch {
	case f.err == nil:
		return ended(a, f, inbox.Result{Status: inbox.Done, Outcome: "effects done"})
	case errors.Is(f.err, webhook.ErrNoHandler):
		return ended(a, f, inbox.Result{Status: inbox.Ignored, Outcome: "no handler for " + a.eventType})
	case errors.Is(f.err, privacy.ErrMore):
		// An erasure made progress and goes on from where it stopped.
		soon := ceilSecond(retrySoon + time.Duration(a.jitter*float64(retrySoon)))
		return takenBack(a, f, reason, soon, "erasure goes on; back soon, the attempt not counted")
	case f.busy:
		// Nothing was tried: the business, or every destination left,
		// was busy. The message comes back soon, growing with its
		// receives, and is sent afresh on the last one SQS allows, for
		// MaxBusyRounds rounds (facts).
		// A part that asked for a pause gets it, as in failed.
		retryIn := max(c.backoff(a.receives, a.jitter), min(webhook.RetryAfterOf(f.err), c.BackoffMax))
		return takenBack(a, f, reason, retryIn, "destinations busy; back soon, the attempt not counted")
	case errors.Is(f.err, errOtherMode), errors.Is(f.err, inbox.ErrRemoved):
		return ended(a, f, inbox.Result{Status: inbox.Ignored, Outcome: reason})
	case errors.Is(f.err, provider.ErrNotFound) && f.tries < c.NotFoundTries && !c.notFoundBefore(f.err):
		// Not a failure of ours (anyone can make an id up): no Failed
		// count for the processor-errors alarm, no warning.
		return decision{result: inbox.Result{Status: inbox.Failed, Error: reason, At: a.now}, retryIn: c.backoff(f.tries, a.jitter),
			uncounted: true, infraFailures: f.infraFailures, level: slog.LevelInfo, note: "not found at the provider; fetched once more after a backoff"}
	case errors.Is(f.err, provider.ErrNotFound):
		// Not parked (no alarm); the claim's condition keeps its repeats
		// from being fetched for the window.
		return ended(a, f, inbox.Result{Status: inbox.Ignored, Outcome: "not found at " + a.provider, Error: reason,
			RenewAfter: a.now.Add(c.notFoundHold(f.err))})
	case f.parkable && !a.parkFailed:
		return ended(a, f, inbox.Result{Status: inbox.Dead, Outcome: "parked in DLQ", Error: reason, Infrastructure: f.infra})
	}
	return c.failed(a, f, reason)
}

// ended is the decision for an attempt that ends its event with res, at
// a.now: parked in the DLQ first when DEAD.
func ended(a attempt, f facts, res inbox.Result) decision {
	res.At = a.now
	return decision{result: res, park: res.Status == inbox.Dead, infraFailures: f.infraFailures, level: slog.LevelInfo,
		note: "event " + string(res.Status)}
}

// takenBack is the decision for an attempt that tried nothing or made
// progress: FAILED, the attempt taken back (Uncounted) and no failure
// counted, the message back after retryIn.
func takenBack(a attempt, f facts, reason string, retryIn time.Duration, note string) decision {
	return decision{result: inbox.Result{Status: inbox.Failed, Error: reason, At: a.now, Uncounted: true}, retryIn: retryIn,
		uncounted: true, infraFailures: f.infraFailures, level: slog.LevelInfo, note: note}
}

// facts are what decide reads from an attempt.
type facts struct {
	err           error // the attempt's error, naming the bound when the infrastructure reached it
	infra         bool  // the infrastructure failed the attempt
	tries         int   // the event's attempts, infrastructure failures not counted
	infraFailures int   // this attempt's included
	parkable      bool  // permanent, or out of tries
	busy          bool  // nothing tried (webhook.ErrBusy), and rounds are left to take the attempt back
}

// facts counts the event's tries. It is parked, with its reason, once its
// error is permanent; on the last receive SQS allows once it has had as
// many tries (receives that ran nothing do not count); or once the
// infrastructure failed MaxInfraFailures of its attempts. An attempt
// that tried nothing (webhook.ErrBusy) is taken back, until its message
// has been sent again MaxBusyRounds times: from then on it counts, so an
// event busy forever is parked out of tries, not brought back forever.
func (c Config) facts(a attempt) facts {
	f := facts{err: a.err, tries: a.item.Attempts - a.item.InfraFailures, infraFailures: a.item.InfraFailures}
	// An event's parts wrap ErrBusy only when nothing else failed.
	if errors.Is(a.err, webhook.ErrBusy) {
		if f.busy = a.rounds < c.MaxBusyRounds; f.busy {
			f.tries--
			return f
		}
		f.err = fmt.Errorf("nothing tried in %d rounds of receives, so the attempt counts; the last: %w", a.rounds, a.err)
	}
	f.infra = a.err != nil && !errors.Is(a.err, webhook.ErrNoHandler) && infrastructure(a.err)
	if f.infra {
		f.infraFailures++
	}
	infraExhausted := f.infra && f.infraFailures >= c.MaxInfraFailures
	if infraExhausted {
		f.err = fmt.Errorf("the infrastructure failed %d attempts; the last: %w", f.infraFailures, a.err)
	}
	exhausted := !f.infra && a.receives >= c.MaxReceiveCount && f.tries >= c.MaxReceiveCount
	// An event whose subjects are not indexed is never parked: it stays
	// unfinished, where an erasure finds it by its claim.
	f.parkable = (webhook.IsPermanent(f.err) || exhausted || infraExhausted) && !errors.Is(a.err, errUnindexed)
	return f
}

// failed is the decision for an attempt to retry: FAILED, the message back
// after a backoff, one that grows with every failure of the
// infrastructure when it was at fault.
func (c Config) failed(a attempt, f facts, reason string) decision {
	d := decision{result: inbox.Result{Status: inbox.Failed, Error: reason, At: a.now, Infrastructure: f.infra},
		infraFailures: f.infraFailures, level: slog.LevelWarn}
	if f.infra {
		d.retryIn = c.infraBackoff(f.infraFailures, a.jitter)
		d.note = "event FAILED: the infrastructure is unavailable; will retry, its tries untouched"
		return d
	}
	d.retryIn = c.backoff(f.tries, a.jitter)
	// A part that asked for a pause (a 429 or 503 Retry-After) gets it.
	if asked := webhook.RetryAfterOf(f.err); asked > d.retryIn {
		d.retryIn = min(asked, c.BackoffMax)
	}
	d.note = "event FAILED; will retry"
	return d
}

// apply carries out what decide makes of a, and reports whether SQS should
// deliver the message again. An event the DLQ refuses is FAILED instead.
func (h *Handler) apply(ctx context.Context, j *job, a attempt) (retry bool) {
	d := h.cfg.decide(a)
	if d.park && h.park(ctx, j.log, j.env.Marshal(), j.env, d.result.Error, a.item.Attempts) != nil {
		a.parkFailed = true
		d = h.cfg.decide(a)
	}
	d.result.Indexed = a.indexed && len(a.item.Subjects) > 0
	done, err := h.store.Finish(ctx, j.env.Key, j.owner, d.result)
	if err != nil {
		return h.unfinished(ctx, j, a.item, d, err)
	}
	h.eraseFinished(ctx, j, done)
	if !d.uncounted {
		h.count(j.env, a.item, d.result)
	}
	if d.result.Status == inbox.Dead && h.cfg.Parked != nil {
		h.cfg.Parked(a.err)
	}
	if errors.Is(a.err, errOtherMode) {
		h.cfg.Metrics.Emit(metrics.Dims{Provider: j.env.Key.Provider(), EventType: j.env.Type}, metrics.Counted(metrics.OtherMode, 1))
	}
	attrs := []any{"attempts", a.item.Attempts}
	if d.result.Infrastructure {
		attrs = append(attrs, "infra_failures", d.infraFailures)
	}
	if d.retryIn > 0 {
		attrs = append(attrs, "retry_in", d.retryIn.String())
	}
	j.log.Log(ctx, d.level, d.note, append(attrs, "reason", d.result.Error)...)
	if d.retryIn == 0 {
		return false
	}
	return h.later(ctx, j, d.retryIn)
}

// eraseFinished erases the payload of it, just finished, when an erasure
// waited for it to finish (inbox.Item.EraseWhenFinished). On failure the
// reconciler's next run erases it.
func (h *Handler) eraseFinished(ctx context.Context, j *job, it inbox.Item) {
	if !it.EraseWhenFinished || (it.Status != inbox.Done && it.Status != inbox.Ignored) {
		return
	}
	if _, err := h.store.RemovePayload(ctx, it.Key, inbox.RemovedErased, h.cfg.Now()); err != nil {
		j.log.Warn("could not erase the payload an erasure waited for; the reconciler does", "reason", err.Error())
		return
	}
	j.log.Info("erased the payload an erasure waited for")
}

// unfinished handles an outcome d that Finish could not write (err).
func (h *Handler) unfinished(ctx context.Context, j *job, it inbox.Item, d decision, err error) (retry bool) {
	j.log.Error("could not record the outcome", "status", string(d.result.Status), "reason", err.Error())
	if !infrastructure(err) {
		// Lease lost: a new owner runs the event; the ledger keeps it from
		// repeating what we finished. Let the message come back.
		return true
	}
	// The store is unavailable; the lease stays until it ends. Come back
	// after a growing backoff, and no sooner than the lease's end, so the
	// next receive can take it over.
	delay := max(h.cfg.infraBackoff(d.infraFailures+1, h.cfg.Jitter()), ceilSecond(it.LeaseUntil.Sub(h.cfg.Now())))
	return h.later(ctx, j, delay)
}

// count records the outcome of one attempt.
func (h *Handler) count(env queue.Envelope, it inbox.Item, res inbox.Result) {
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

// park sends the event to the DLQ with its reason.
func (h *Handler) park(ctx context.Context, log *slog.Logger, body string, env queue.Envelope, reason string, attempts int) error {
	if err := h.dlq.Park(ctx, body, env, reason, attempts, h.cfg.Now()); err != nil {
		log.Error("could not park in the DLQ; retry", "reason", err.Error())
		return err
	}
	return nil
}

// notFoundBefore reports whether err, a not-found error, says the provider
// did not know the object at an earlier claim either: its count of "not
// found" answers is above one claim's NotFoundTries.
func (c Config) notFoundBefore(err error) bool {
	var n *provider.NotFoundError
	return errors.As(err, &n) && n.Count > c.NotFoundTries
}

// notFoundHold is how long notifications of an object its provider did not
// know are duplicates: NotFoundHold after the first claim of an id whose
// fetcher counts its "not found" answers, NotFoundWindow otherwise.
func (c Config) notFoundHold(err error) time.Duration {
	var n *provider.NotFoundError
	if errors.As(err, &n) && !c.notFoundBefore(err) {
		return c.NotFoundHold
	}
	return c.NotFoundWindow
}

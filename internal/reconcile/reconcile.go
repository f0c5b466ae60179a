package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/metrics"
	"github.com/hookinbox/hookinbox/internal/webhook"
)

// Config tunes a Handler; zero fields take their defaults.
type Config struct {
	// StuckAfter is how long a claim may sit in RECEIVED or FAILED before
	// it is re-enqueued. Default 15 min, above the processor's longest
	// backoff, so a FAILED event waiting for its retry is not disturbed.
	StuckAfter time.Duration
	// Limit is how many pending claims one run looks at. Default 500.
	Limit int
	// Lookback is how far back the first run (no checkpoint) lists
	// events. Default 0: from the first run on.
	Lookback time.Duration
	// Settle is how old an event must be before the reconciler claims it,
	// and how far behind now the checkpoint stays: a webhook on its way is
	// not counted as missed, and an event the provider lists a little late
	// is still seen. Default 5 min.
	Settle time.Duration
	// MaxSpan is the most history one run lists; a long outage is caught
	// up over several runs. Default 6 h.
	MaxSpan time.Duration
	// Margin: a run stops handling events when its context's deadline is
	// closer, and saves the checkpoint. Default 15 s.
	Margin time.Duration
	// Metrics records each run's StuckClaims, Reconciled, OverdueLeases,
	// ReconcileErrors, and per provider Missed and CheckpointLag; nil
	// records nothing.
	Metrics *metrics.Recorder
	Now     func() time.Time
}

func (c Config) withDefaults() Config {
	if c.StuckAfter <= 0 {
		c.StuckAfter = 15 * time.Minute
	}
	if c.Limit <= 0 {
		c.Limit = 500
	}
	if c.Lookback < 0 {
		c.Lookback = 0
	}
	if c.Settle <= 0 {
		c.Settle = 5 * time.Minute
	}
	if c.MaxSpan <= 0 {
		c.MaxSpan = 6 * time.Hour
	}
	if c.Margin <= 0 {
		c.Margin = 15 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// pendingStore lists the inbox calls for stuck claims.
type pendingStore interface {
	Pending(ctx context.Context, cutoff time.Time, limit int) ([]inbox.Item, error)
	MarkEnqueued(ctx context.Context, key webhook.Key, cutoff, now time.Time, statuses ...inbox.Status) (inbox.Item, error)
}

// sender sends envelopes to the events queue.
type sender interface {
	Send(ctx context.Context, env webhook.Envelope) error
}

// accepter claims and enqueues an event; *intake.Intake is the one.
type accepter interface {
	Accept(ctx context.Context, ev webhook.Event) (intake.Outcome, error)
}

// eventSource lists a provider's events created in [from, to), oldest
// first; StripeEvents is one.
type eventSource interface {
	Provider() string
	List(ctx context.Context, from, to time.Time) ([]webhook.Event, error)
}

// checkpointStore keeps, per provider, the time before which every event
// has been handled.
type checkpointStore interface {
	Load(ctx context.Context, provider string) (time.Time, bool, error)
	Save(ctx context.Context, provider string, t time.Time) error
}

// Handler is one reconciler.
type Handler struct {
	cfg         Config
	store       pendingStore
	events      sender
	intake      accepter
	source      eventSource
	checkpoints checkpointStore
	log         *slog.Logger
}

// New returns a Handler. source, intake and checkpoints may be nil
// together: the run then only re-enqueues stuck claims.
func New(cfg Config, store pendingStore, events sender, in accepter, source eventSource, checkpoints checkpointStore, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg.withDefaults(), store: store, events: events, intake: in, source: source, checkpoints: checkpoints, log: log}
}

// Line is one claim or event the run acted on.
type Line struct {
	Key     string `json:"key"`
	Type    string `json:"type,omitempty"`
	Outcome string `json:"outcome"`
	Note    string `json:"note,omitempty"`
}

// Outcomes in Line.Outcome.
const (
	Reenqueued = "re-enqueued"   // a stuck claim got a new message
	Overdue    = "lease overdue" // PROCESSING long after its lease ended: see the DLQ
	Claimed    = "claimed"       // an event that never arrived, now claimed and enqueued
	Failed     = "failed"        // see Note; the next run tries again
)

// Summary is what one run did.
type Summary struct {
	Stuck         int       `json:"stuckClaims"`   // RECEIVED/FAILED past StuckAfter, plus overdue leases
	Reenqueued    int       `json:"reenqueued"`    // of those, re-enqueued now
	OverdueLeases int       `json:"overdueLeases"` // PROCESSING whose lease ended more than StuckAfter ago
	Listed        int       `json:"listed"`        // provider events listed
	Missed        int       `json:"missed"`        // of those, never claimed before: claimed and enqueued now
	Checkpoint    time.Time `json:"checkpoint"`    // events created before it are all handled
	Errors        []string  `json:"errors,omitempty"`
	Events        []Line    `json:"events"`
}

// Handle runs the reconciler once, for the schedule's event. The error
// joins every failure; the summary says what was done regardless.
func (h *Handler) Handle(ctx context.Context, _ events.EventBridgeEvent) (Summary, error) {
	return h.Run(ctx)
}

// Run re-enqueues stuck claims, then claims missed provider events.
func (h *Handler) Run(ctx context.Context) (Summary, error) {
	s := Summary{Events: []Line{}}
	now := h.cfg.Now()
	var errs []error
	if err := h.stuck(ctx, now, &s); err != nil {
		errs = append(errs, err)
	}
	if h.source != nil {
		if err := h.missed(ctx, now, &s); err != nil {
			errs = append(errs, err)
		}
	}
	for _, err := range errs {
		s.Errors = append(s.Errors, err.Error())
	}
	h.report(ctx, s)
	return s, errors.Join(errs...)
}

// stuck re-enqueues claims in RECEIVED or FAILED whose last message went
// out before now-StuckAfter, and counts leases long overdue.
func (h *Handler) stuck(ctx context.Context, now time.Time, s *Summary) error {
	cutoff := now.Add(-h.cfg.StuckAfter)
	items, err := h.store.Pending(ctx, cutoff, h.cfg.Limit)
	if err != nil {
		return fmt.Errorf("find stuck claims: %w", err)
	}
	var errs []error
	for _, it := range items {
		switch it.Status {
		case inbox.Received, inbox.Failed:
		case inbox.Processing:
			if it.LeaseUntil.Before(cutoff) {
				s.Stuck++
				s.OverdueLeases++
				s.Events = append(s.Events, Line{Key: it.Key.String(), Type: it.EventType, Outcome: Overdue,
					Note: "lease ended " + it.LeaseUntil.Format(time.RFC3339) + "; its message is in the DLQ: replay it"})
			}
			continue
		default:
			continue
		}
		s.Stuck++
		// The guard: only one re-enqueue per StuckAfter, and only while
		// the claim is still RECEIVED or FAILED.
		_, err := h.store.MarkEnqueued(ctx, it.Key, cutoff, now, inbox.Received, inbox.Failed)
		if errors.Is(err, inbox.ErrNotDue) || errors.Is(err, inbox.ErrNotFound) {
			s.Stuck-- // moved on since it was listed
			continue
		}
		if err == nil {
			err = h.events.Send(ctx, webhook.Envelope{Key: it.Key, Type: it.EventType})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("re-enqueue %s: %w", it.Key, err))
			s.Events = append(s.Events, Line{Key: it.Key.String(), Type: it.EventType, Outcome: Failed, Note: err.Error()})
			continue
		}
		s.Reenqueued++
		s.Events = append(s.Events, Line{Key: it.Key.String(), Type: it.EventType, Outcome: Reenqueued,
			Note: fmt.Sprintf("%s since %s, %d attempts", it.Status, it.EnqueuedAt.Format(time.RFC3339), it.Attempts)})
		h.log.WarnContext(ctx, "re-enqueued a stuck claim", "key", it.Key.String(), "type", it.EventType,
			"status", string(it.Status), "enqueued_at", it.EnqueuedAt, "attempts", it.Attempts)
	}
	return errors.Join(errs...)
}

// missed lists the provider's events since the checkpoint and hands each
// to the intake; the checkpoint then moves past what was handled.
func (h *Handler) missed(ctx context.Context, now time.Time, s *Summary) error {
	provider := h.source.Provider()
	from, ok, err := h.checkpoints.Load(ctx, provider)
	if err != nil {
		return err
	}
	if !ok {
		from = now.Add(-h.cfg.Lookback)
	}
	from = from.Truncate(time.Second)
	s.Checkpoint = from
	// Events younger than Settle are left to arrive as webhooks first (the
	// provider's first attempt is immediate); a later run lists them.
	to := now.Add(-h.cfg.Settle).Truncate(time.Second)
	if to.Sub(from) > h.cfg.MaxSpan {
		to = from.Add(h.cfg.MaxSpan)
	}
	if !to.After(from) {
		return nil
	}
	evs, err := h.source.List(ctx, from, to)
	if err != nil {
		return fmt.Errorf("list %s events since %s: %w", provider, from.Format(time.RFC3339), err)
	}
	s.Listed = len(evs)
	next, runErr := to, error(nil)
	for _, ev := range evs {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < h.cfg.Margin {
			next = ev.Created
			runErr = fmt.Errorf("stopped at %s (created %s): the function is about to time out; the next run goes on from there",
				ev.Key(), ev.Created.Format(time.RFC3339))
			break
		}
		outcome, err := h.intake.Accept(ctx, ev)
		if err != nil {
			// The checkpoint stays before this event, so the next run
			// lists it again.
			next = ev.Created
			runErr = fmt.Errorf("claim %s: %w", ev.Key(), err)
			s.Events = append(s.Events, Line{Key: ev.Key().String(), Type: ev.Type, Outcome: Failed, Note: err.Error()})
			break
		}
		if outcome == intake.Accepted {
			s.Missed++
			s.Events = append(s.Events, Line{Key: ev.Key().String(), Type: ev.Type, Outcome: Claimed,
				Note: "created " + ev.Created.Format(time.RFC3339) + "; never arrived as a webhook"})
			h.log.WarnContext(ctx, "claimed an event that never arrived as a webhook", "key", ev.Key().String(), "type", ev.Type, "created", ev.Created)
		}
	}
	// Events of the last few minutes are listed again next time, in case
	// the provider lists some of them late; the inbox refuses repeats.
	if settled := now.Add(-h.cfg.Settle).Truncate(time.Second); next.After(settled) {
		next = settled
	}
	if next.After(from) {
		if err := h.checkpoints.Save(ctx, provider, next); err != nil {
			return errors.Join(runErr, err)
		}
		s.Checkpoint = next
	}
	return runErr
}

// report logs the run and records its metrics: StuckClaims (which the
// stuck-claims alarm watches, so it is recorded every run, zero included),
// Reconciled, OverdueLeases and ReconcileErrors without dimensions, and
// the provider's Missed and CheckpointLag.
func (h *Handler) report(ctx context.Context, s Summary) {
	h.cfg.Metrics.Emit(metrics.Dims{},
		metrics.Counted(metrics.StuckClaims, s.Stuck), metrics.Counted(metrics.Reconciled, s.Reenqueued),
		metrics.Counted(metrics.OverdueLeases, s.OverdueLeases), metrics.Counted(metrics.ReconcileErrors, len(s.Errors)))
	if h.source != nil {
		ms := []metrics.Metric{metrics.Counted(metrics.Missed, s.Missed)}
		if !s.Checkpoint.IsZero() {
			ms = append(ms, metrics.Secs(metrics.CheckpointLag, h.cfg.Now().Sub(s.Checkpoint)))
		}
		h.cfg.Metrics.Emit(metrics.Dims{Provider: h.source.Provider()}, ms...)
	}
	attrs := []any{
		"stuck_claims", s.Stuck, "reenqueued", s.Reenqueued, "missed", s.Missed,
		"overdue_leases", s.OverdueLeases, "listed", s.Listed, "checkpoint", s.Checkpoint, "errors", len(s.Errors),
	}
	level := slog.LevelInfo
	if len(s.Errors) > 0 {
		level = slog.LevelError
	}
	h.log.Log(ctx, level, "reconciler run", attrs...)
}

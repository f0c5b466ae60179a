package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Config tunes a Handler; zero fields take their defaults.
type Config struct {
	// StuckAfter is how long a claim may sit in RECEIVED or FAILED before
	// it is re-enqueued. Default 15 min, above the processor's longest
	// backoff, so a FAILED event waiting for its retry is not disturbed.
	StuckAfter time.Duration
	// Limit is how many pending claims one run looks at, split evenly
	// over the shards of the pending index (a per-shard budget), so one
	// busy shard cannot starve the others. Default 512 (64 a shard).
	Limit int
	// Lookback is how far back the first run (no checkpoint) lists
	// events, for a source without a Lookback of its own. Default 0: from
	// the first run on.
	Lookback time.Duration
	// Margin: a run stops handling claims and events when its context's
	// deadline is closer, and saves the checkpoint. Default 15 s.
	Margin time.Duration
	// Metrics records each run's StuckClaims, Reconciled, OverdueLeases,
	// ReconcileErrors, and per provider Missed, Skipped and CheckpointLag;
	// nil records nothing.
	Metrics *metrics.Recorder
	Now     func() time.Time
	// Retention removes the payloads of events finished longer ago than
	// they are kept (privacy.Retention.Run), once a run; nil removes none.
	Retention func(ctx context.Context, now time.Time) (removed int, err error)
}

const (
	// settle is how old an event must be before the reconciler claims it,
	// and how far behind now the checkpoint stays: a webhook on its way is
	// not counted as missed, and an event the provider lists a little late
	// is still seen.
	settle = 5 * time.Minute
	// maxSpan is the most history one run lists; a long outage is caught
	// up over several runs.
	maxSpan = 6 * time.Hour
	// maxTries is how many runs may fail on the same listed event, while
	// later events are accepted, before it is recorded and skipped so the
	// checkpoint moves on.
	maxTries = 3
)

func (c Config) withDefaults() Config {
	c.StuckAfter = cmp.Or(c.StuckAfter, 15*time.Minute)
	c.Limit = cmp.Or(c.Limit, 512)
	c.Lookback = max(c.Lookback, 0)
	c.Margin = cmp.Or(c.Margin, 15*time.Second)
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// pendingStore lists the inbox calls for stuck claims.
type pendingStore interface {
	PendingShard(ctx context.Context, shard int, cutoff time.Time, limit int) ([]inbox.Item, error)
	MarkEnqueued(ctx context.Context, key webhook.Key, cutoff, now time.Time, statuses ...inbox.Status) (inbox.Item, error)
}

// sender sends envelopes to the events queue.
type sender interface {
	Send(ctx context.Context, env queue.Envelope) error
}

// accepter claims and enqueues an event; *intake.Intake is the one.
type accepter interface {
	Accept(ctx context.Context, ev webhook.Event) (intake.Outcome, error)
}

// Source is one provider's reconcile source (provider.Source: a
// provider.Lister or provider.Sweeper) under the provider's name; each
// keeps its own checkpoint.
type Source struct {
	Provider string
	provider.Source
}

// checkpointStore keeps, per provider, the time before which every event
// has been handled, and the events skipped.
type checkpointStore interface {
	Load(ctx context.Context, provider string) (Checkpoint, bool, error)
	Save(ctx context.Context, provider string, cp Checkpoint) error
	Skip(ctx context.Context, provider string, ev webhook.Event, reason string) error
}

// Handler is one reconciler.
type Handler struct {
	cfg         Config
	store       pendingStore
	events      sender
	intake      accepter
	sources     []Source
	checkpoints checkpointStore
	log         *slog.Logger
}

// New returns a Handler. With no sources, intake and checkpoints may be
// nil: the run then only re-enqueues stuck claims.
func New(cfg Config, store pendingStore, events sender, in accepter, sources []Source, checkpoints checkpointStore, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg.withDefaults(), store: store, events: events, intake: in, sources: sources, checkpoints: checkpoints, log: log}
}

// reenqueued is the Outcome of a stuck claim, or a lease long overdue,
// given a new message; a source's events end provider.Claimed,
// provider.Failed or provider.Skipped.
const reenqueued = "re-enqueued"

// Summary is what one run did.
type Summary struct {
	StartShard    int             `json:"startShard"`    // the pending-index shard read first this run
	Stuck         int             `json:"stuckClaims"`   // RECEIVED/FAILED past StuckAfter, plus overdue leases
	Reenqueued    int             `json:"reenqueued"`    // of those, re-enqueued now
	OverdueLeases int             `json:"overdueLeases"` // PROCESSING whose lease ended more than StuckAfter ago
	Listed        int             `json:"listed"`        // provider events listed
	Pages         int             `json:"pages"`         // list windows read, each followed by a checkpoint save
	Missed        int             `json:"missed"`        // of those, never claimed before: claimed and enqueued now
	Skipped       int             `json:"skipped"`       // events given up on after maxTries runs, recorded
	Checkpoint    time.Time       `json:"checkpoint"`    // the oldest source checkpoint: events created before it are all handled
	Errors        []string        `json:"errors,omitempty"`
	Events        []provider.Line `json:"events"`
	// PayloadsRemoved counts the payloads of finished events removed
	// this run, past their retention (Config.Retention).
	PayloadsRemoved int `json:"payloadsRemoved"`
	// Providers says what each source did, in the order they ran.
	Providers []ProviderRun `json:"providers,omitempty"`
}

// ProviderRun is what one source did in a run.
type ProviderRun struct {
	Provider   string    `json:"provider"`
	Listed     int       `json:"listed"`  // events listed, or objects fetched (a sweep)
	Missed     int       `json:"missed"`  // never arrived: claimed and enqueued now
	Skipped    int       `json:"skipped"` // given up on after maxTries runs
	Checkpoint time.Time `json:"checkpoint"`
	Errors     int       `json:"errors"`
}

// Handle runs the reconciler once, for the schedule's event. The error
// joins every failure; the summary says what was done regardless.
func (h *Handler) Handle(ctx context.Context, _ events.EventBridgeEvent) (Summary, error) {
	return h.Run(ctx)
}

// Run re-enqueues stuck claims, then claims missed provider events.
func (h *Handler) Run(ctx context.Context) (Summary, error) {
	s := Summary{Events: []provider.Line{}}
	now := h.cfg.Now()
	var errs []error
	if err := h.stuck(ctx, now, &s); err != nil {
		errs = append(errs, err)
	}
	// Each source runs whatever the others did: one failing provider
	// does not keep the others' missed events away.
	for _, src := range h.sources {
		if src.List == nil {
			continue
		}
		before := s
		s.Checkpoint = time.Time{}
		err := h.missed(ctx, now, src, &s)
		pr := ProviderRun{Provider: src.Provider, Listed: s.Listed - before.Listed, Missed: s.Missed - before.Missed,
			Skipped: s.Skipped - before.Skipped, Checkpoint: s.Checkpoint}
		if err != nil {
			pr.Errors = 1
			errs = append(errs, fmt.Errorf("%s: %w", src.Provider, err))
		}
		s.Providers = append(s.Providers, pr)
	}
	errs = append(errs, h.sweeps(ctx, now, &s)...)
	if h.cfg.Retention != nil {
		n, err := h.cfg.Retention(ctx, now)
		s.PayloadsRemoved = n
		if err != nil {
			errs = append(errs, fmt.Errorf("retention: %w", err))
		}
	}
	s.Checkpoint = time.Time{}
	for _, pr := range s.Providers {
		if !pr.Checkpoint.IsZero() && (s.Checkpoint.IsZero() || pr.Checkpoint.Before(s.Checkpoint)) {
			s.Checkpoint = pr.Checkpoint
		}
	}
	for _, err := range errs {
		s.Errors = append(s.Errors, err.Error())
	}
	h.report(ctx, s)
	return s, errors.Join(errs...)
}

// late reports whether the run should stop: its context's deadline is
// closer than the margin.
func (h *Handler) late(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ok && dl.Sub(h.cfg.Now()) < h.cfg.Margin
}

// stuck re-enqueues claims in RECEIVED or FAILED whose last message went
// out before now-StuckAfter, and PROCESSING events whose lease ended
// before then (a worker died; their message may be in the DLQ). It reads
// each shard of the pending index up to a per-shard budget, starting at a
// shard that rotates from run to run, so neither a busy shard nor a run
// cut short by its deadline starves the others.
func (h *Handler) stuck(ctx context.Context, now time.Time, s *Summary) error {
	cutoff := now.Add(-h.cfg.StuckAfter)
	budget := (h.cfg.Limit + inbox.PendingShards - 1) / inbox.PendingShards
	s.StartShard = StartShard(now)
	var errs []error
	for i := 0; i < inbox.PendingShards; i++ {
		if h.late(ctx) {
			errs = append(errs, errors.New("stuck claims: stopped before every shard was read: the function is about to time out; the next run starts at another shard"))
			break
		}
		shard := (s.StartShard + i) % inbox.PendingShards
		items, err := h.store.PendingShard(ctx, shard, cutoff, budget)
		if err != nil {
			errs = append(errs, fmt.Errorf("find stuck claims: %w", err))
			continue
		}
		for _, it := range items {
			if h.late(ctx) {
				break
			}
			if err := h.reenqueue(ctx, it, cutoff, now, s); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// StartShard is the pending-index shard a run at now reads first: it
// moves on every minute, so runs on any schedule that is not a multiple
// of PendingShards minutes take every shard first in turn.
func StartShard(now time.Time) int {
	return int((now.Unix() / 60) % inbox.PendingShards)
}

// reenqueue sends a new message for one pending item if it is stuck.
func (h *Handler) reenqueue(ctx context.Context, it inbox.Item, cutoff, now time.Time, s *Summary) error {
	note := fmt.Sprintf("%s since %s, %d attempts", it.Status, it.EnqueuedAt.Format(time.RFC3339), it.Attempts)
	switch it.Status {
	case inbox.Received, inbox.Failed:
	case inbox.Processing:
		if !it.LeaseUntil.Before(cutoff) {
			return nil // a live lease, or one that ended lately: its message comes back by itself
		}
		note = "lease ended " + it.LeaseUntil.Format(time.RFC3339) + "; its worker died and its message may be in the DLQ"
	default:
		return nil
	}
	// The guard: only one re-enqueue per StuckAfter, and only while the
	// event is still in the status it was listed in.
	_, err := h.store.MarkEnqueued(ctx, it.Key, cutoff, now, it.Status)
	if errors.Is(err, inbox.ErrNotDue) || errors.Is(err, inbox.ErrNotFound) {
		return nil // moved on since it was listed
	}
	s.Stuck++
	if it.Status == inbox.Processing {
		s.OverdueLeases++
	}
	if err == nil {
		err = h.events.Send(ctx, queue.Envelope{Key: it.Key, Type: it.EventType})
	}
	if err != nil {
		reason := logs.RedactError(err)
		s.Events = append(s.Events, provider.Line{Key: it.Key.String(), Type: it.EventType, Outcome: provider.Failed, Note: reason})
		return fmt.Errorf("re-enqueue %s: %s", it.Key, reason)
	}
	s.Reenqueued++
	s.Events = append(s.Events, provider.Line{Key: it.Key.String(), Type: it.EventType, Outcome: reenqueued, Note: note})
	h.log.WarnContext(ctx, "re-enqueued a stuck claim", "key", it.Key.String(), "type", it.EventType,
		"status", string(it.Status), "enqueued_at", it.EnqueuedAt, "lease_until", it.LeaseUntil, "attempts", it.Attempts)
	return nil
}

// missed lists the provider's events since the checkpoint, a page at a
// time, hands each to the intake and saves the checkpoint after each
// page, until the window is done or the deadline is near.
//
// The first event that fails holds the checkpoint back; the run goes on
// after it, so a failure of that one event can be told from a failure of
// the path itself (a second failure stops the run). An event that has
// failed in maxTries runs while later events were accepted is recorded
// and skipped, so the checkpoint moves past it.
func (h *Handler) missed(ctx context.Context, now time.Time, source Source, s *Summary) error {
	cp, ok, err := h.checkpoints.Load(ctx, source.Provider)
	if err != nil {
		return err
	}
	if !ok {
		cp = Checkpoint{At: now.Add(-max(cmp.Or(source.Lookback, h.cfg.Lookback), 0))}
	}
	from := cp.At.Truncate(time.Second)
	s.Checkpoint = from
	// Events younger than settle are left to arrive as webhooks first (the
	// provider's first attempt is immediate); a later run lists them. They
	// are listed again next time too, in case the provider lists some of
	// them late; the inbox refuses repeats.
	to := now.Add(-settle).Truncate(time.Second)
	if to.Sub(from) > maxSpan {
		to = from.Add(maxSpan)
	}
	p := &pass{h: h, provider: source.Provider, was: cp, s: s}
	for from.Before(to) && !p.stop {
		if h.late(ctx) {
			p.halt(from, fmt.Errorf("stopped at %s: the function is about to time out; the next run goes on from there", from.Format(time.RFC3339)))
			break
		}
		evs, upTo, err := source.List.Next(ctx, from, to)
		if err != nil {
			p.halt(from, fmt.Errorf("list %s events since %s: %w", source.Provider, from.Format(time.RFC3339), err))
			break
		}
		s.Listed += len(evs)
		s.Pages++
		p.page(ctx, evs, upTo)
		if err := h.checkpoints.Save(ctx, source.Provider, p.checkpoint()); err != nil {
			return errors.Join(p.err, err)
		}
		s.Checkpoint = p.checkpoint().At
		from = upTo
	}
	if p.stop && p.failed == "" {
		// Stopped before anything failed: save where it stopped.
		if err := h.checkpoints.Save(ctx, source.Provider, p.checkpoint()); err != nil {
			return errors.Join(p.err, err)
		}
		s.Checkpoint = p.checkpoint().At
	}
	return p.err
}

// pass is one run through a provider's event list.
type pass struct {
	h        *Handler
	provider string
	was      Checkpoint // as the run found it
	s        *Summary

	done          time.Time   // every event before it is handled, or skipped
	failed        webhook.Key // the first event that failed, if any
	failedAt      time.Time
	laterAccepted bool // an event after the failed one was accepted
	stop          bool
	err           error
}

// page hands one page of events to the intake, oldest first; upTo is
// where the page ends.
func (p *pass) page(ctx context.Context, evs []webhook.Event, upTo time.Time) {
	for _, ev := range evs {
		if p.h.late(ctx) {
			p.halt(ev.Created, fmt.Errorf("stopped at %s (created %s): the function is about to time out; the next run goes on from there",
				ev.Key(), ev.Created.Format(time.RFC3339)))
			return
		}
		outcome, err := p.h.intake.Accept(ctx, ev)
		if err != nil {
			reason := logs.RedactError(err)
			if p.failed != "" {
				p.stop = true // a second failure: the path itself is failing
				return
			}
			if p.was.Blocked == ev.Key() && p.was.Tries+1 >= maxTries {
				p.h.skip(ctx, p.provider, ev, reason, p.s)
				continue
			}
			p.failed, p.failedAt = ev.Key(), ev.Created
			p.err = fmt.Errorf("claim %s: %s", ev.Key(), reason)
			p.s.Events = append(p.s.Events, provider.Line{Key: ev.Key().String(), Type: ev.Type, Outcome: provider.Failed, Note: reason})
			continue
		}
		if p.failed != "" {
			p.laterAccepted = true
		}
		if outcome == intake.Accepted {
			p.s.Missed++
			p.s.Events = append(p.s.Events, provider.Line{Key: ev.Key().String(), Type: ev.Type, Outcome: provider.Claimed,
				Note: "created " + ev.Created.Format(time.RFC3339) + "; never arrived as a webhook"})
			p.h.log.WarnContext(ctx, "claimed an event that never arrived as a webhook", "key", ev.Key().String(), "type", ev.Type, "created", ev.Created)
		}
	}
	p.done = upTo
}

// halt stops the run before the event created at, with err.
func (p *pass) halt(at time.Time, err error) {
	p.stop = true
	if p.failed == "" {
		p.done, p.err = at, err
	}
}

// checkpoint returns the checkpoint to save: before the first failed
// event, which counts a try only when a later event got through.
func (p *pass) checkpoint() Checkpoint {
	if p.failed == "" {
		at := p.done
		if at.Before(p.was.At) {
			at = p.was.At
		}
		return Checkpoint{At: at}
	}
	tries := 0
	if p.was.Blocked == p.failed {
		tries = p.was.Tries
	}
	if p.laterAccepted {
		tries++
	}
	return Checkpoint{At: p.failedAt, Blocked: p.failed, Tries: tries}
}

// skip records an event that cannot be accepted and lets the checkpoint
// move past it.
func (h *Handler) skip(ctx context.Context, name string, ev webhook.Event, reason string, s *Summary) {
	s.Skipped++
	note := fmt.Sprintf("failed in %d runs, last: %s", maxTries, reason)
	if err := h.checkpoints.Skip(ctx, name, ev, note); err != nil {
		note += "; recording it failed: " + logs.RedactError(err)
	}
	s.Events = append(s.Events, provider.Line{Key: ev.Key().String(), Type: ev.Type, Outcome: provider.Skipped, Note: note})
	h.log.ErrorContext(ctx, "skipped an event that could not be accepted", "key", ev.Key().String(), "type", ev.Type,
		"created", ev.Created, "tries", maxTries, "reason", reason, "SkippedEvents", 1)
}

// report logs the run and records its metrics: StuckClaims (which the
// stuck-claims alarm watches, so it is recorded every run, zero included),
// Reconciled and OverdueLeases without dimensions, and per source Missed,
// Skipped, CheckpointLag and ReconcileErrors (each also published without
// dimensions, which the alarms watch). Stuck-claim errors are counted
// without a provider.
func (h *Handler) report(ctx context.Context, s Summary) {
	sourceErrs := 0
	for _, pr := range s.Providers {
		sourceErrs += pr.Errors
	}
	h.cfg.Metrics.Emit(metrics.Dims{},
		metrics.Counted(metrics.StuckClaims, s.Stuck), metrics.Counted(metrics.Reconciled, s.Reenqueued),
		metrics.Counted(metrics.OverdueLeases, s.OverdueLeases), metrics.Counted(metrics.ReconcileErrors, len(s.Errors)-sourceErrs))
	for _, pr := range s.Providers {
		ms := []metrics.Metric{metrics.Counted(metrics.Missed, pr.Missed), metrics.Counted(metrics.Skipped, pr.Skipped),
			metrics.Counted(metrics.Reconciled, pr.Missed),
			metrics.Counted(metrics.ReconcileErrors, pr.Errors)}
		if !pr.Checkpoint.IsZero() {
			ms = append(ms, metrics.Secs(metrics.CheckpointLag, h.cfg.Now().Sub(pr.Checkpoint)))
		}
		h.cfg.Metrics.Emit(metrics.Dims{Provider: pr.Provider}, ms...)
	}
	attrs := []any{
		"stuck_claims", s.Stuck, "reenqueued", s.Reenqueued, "missed", s.Missed, "skipped", s.Skipped,
		"overdue_leases", s.OverdueLeases, "start_shard", s.StartShard, "listed", s.Listed, "pages", s.Pages,
		"checkpoint", s.Checkpoint, "errors", len(s.Errors),
	}
	for _, pr := range s.Providers {
		attrs = append(attrs, slog.Group(pr.Provider, "listed", pr.Listed, "missed", pr.Missed, "skipped", pr.Skipped,
			"checkpoint", pr.Checkpoint, "errors", pr.Errors))
	}
	level := slog.LevelInfo
	if len(s.Errors) > 0 {
		level = slog.LevelError
	}
	h.log.Log(ctx, level, "reconciler run", attrs...)
}

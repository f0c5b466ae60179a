package destination

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/webhook"
)

// Options are what a Set delivers with.
type Options struct {
	// HTTP sends to URL destinations; nil means one that follows no
	// redirect, gives up after 10s and, unless LocalHTTP, connects to no
	// address of its own machine.
	HTTP *http.Client
	// EventBridge puts events on bus destinations; required when one is
	// configured.
	EventBridge eventBridgeAPI
	// Secrets returns the signing and header secrets by ARN; required when
	// a URL destination is configured.
	Secrets secretFunc
	// Log records each delivery attempt; nil records none.
	Log *Log
	// Metrics records each attempt by destination; nil records nothing.
	Metrics *metrics.Recorder
	// Logger logs a delivery log that could not be written; nil logs
	// nothing.
	Logger *slog.Logger
	// LocalHTTP accepts plain http:// to a loopback host, and https://
	// to this machine: the local stack's rules (Validate, LocalHTTPEnv).
	LocalHTTP bool
}

// Set is the destinations of a deployment. Safe for concurrent use.
type Set struct {
	dests []*destination
	o     Options
}

// destination is one configured destination and its concurrency limit.
type destination struct {
	cfg    Config
	slots  chan struct{} // a token per delivery in flight
	sender interface {
		send(ctx context.Context, ev webhook.Event, b body) (answer, error)
	}
}

// New returns the Set of cfgs, which must be valid (Validate, Parse).
func New(cfgs []Config, o Options) (*Set, error) {
	if err := Validate(cfgs, o.LocalHTTP); err != nil {
		return nil, err
	}
	if o.HTTP == nil {
		o.HTTP = newHTTPClient(defaultTimeout, o.LocalHTTP)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Set{o: o}
	for _, c := range withDefaults(cfgs) {
		d := &destination{cfg: c, slots: make(chan struct{}, c.Concurrency)}
		switch {
		case c.IsBus() && o.EventBridge == nil:
			return nil, fmt.Errorf("destination %s: no EventBridge client", c.Name)
		case c.IsBus():
			d.sender = &busDestination{cfg: c, client: o.EventBridge}
		case o.Secrets == nil:
			return nil, fmt.Errorf("destination %s: no way to read its secrets", c.Name)
		default:
			d.sender = &httpDestination{cfg: c, client: o.HTTP, secrets: o.Secrets}
		}
		s.dests = append(s.dests, d)
	}
	return s, nil
}

// Len returns how many destinations s has.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.dests)
}

// matching returns the destinations ev's provider and type match.
func (s *Set) matching(ev webhook.Event) []*destination {
	var ds []*destination
	for _, d := range s.dests {
		if d.cfg.matches(ev.Provider, ev.Type) {
			ds = append(ds, d)
		}
	}
	return ds
}

// Business is the team's Go code (processorfn.Business).
type Business interface {
	Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error
}

// Wrap returns a Business that runs next (nil: none) and delivers ev to
// every destination it matches, each as its own effect (effectName) in
// fx, all at once: a slow destination holds up neither next nor the
// others. Its error is Combine's.
func (s *Set) Wrap(next Business) Business {
	return &withDestinations{next: next, set: s}
}

type withDestinations struct {
	next Business
	set  *Set
}

func (w *withDestinations) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	ds := w.set.matching(ev)
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	for i, d := range ds {
		wg.Go(func() { errs[i] = w.set.deliver(ctx, d, ev, fx) })
	}
	// The business runs on this goroutine, so the processor recovers its
	// panic; the deliveries are waited for even then.
	berr := func() error {
		defer wg.Wait()
		if w.next == nil {
			return fmt.Errorf("%w: no business and no destination for %s:%s", webhook.ErrNoHandler, ev.Provider, ev.Type)
		}
		return w.next.Handle(ctx, ev, fx)
	}()
	if len(ds) > 0 && errors.Is(berr, webhook.ErrNoHandler) {
		berr = nil // delivered somewhere: not ignored
	}
	return Combine(append([]error{berr}, errs...)...)
}

// Combine returns the error of an event whose parts (its business, each
// destination, a privacy request) returned errs, so that no part's
// failure costs another part its turn:
//   - nil when all are nil;
//   - every error joined, wrapping webhook.ErrBusy, when every failure
//     but the held ones (below) is busy: the processor brings the event
//     back soon without counting an attempt;
//   - while any part is still to run (busy, or failed in a way that may
//     pass), a permanent failure is held: it parks nothing yet (it
//     wraps neither webhook.ErrPermanent nor its kind), and the event
//     comes back for the others; a refusing destination is asked again
//     then, and the event is parked once every other part is done, or out
//     of its tries;
//   - otherwise every error joined, busy ones as plain text, so the
//     attempt counts, a permanent one parks the event, and a retry runs
//     only what the ledger has not recorded.
func Combine(errs ...error) error {
	var failed []error
	busy, permanent := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			continue
		case errors.Is(err, webhook.ErrBusy):
			busy++
		case webhook.IsPermanent(err):
			permanent++
		}
		failed = append(failed, err)
	}
	pending := len(failed) - permanent
	for i, err := range failed {
		switch {
		case pending > 0 && webhook.IsPermanent(err):
			failed[i] = heldError{err}
		case busy < pending && errors.Is(err, webhook.ErrBusy):
			failed[i] = errors.New(err.Error())
		}
	}
	return errors.Join(failed...)
}

// heldError is a permanent failure held back while other parts of its
// event are still to run (Combine): it shows its text and wraps nothing,
// so the processor retries the event instead of parking it, and parks it
// with that text once out of tries. Parked still counts its destination.
type heldError struct{ err error }

func (e heldError) Error() string { return e.err.Error() }

// deliver delivers ev to d as the effect effectName(d's name) in fx: not
// at all when the ledger records it, and not tried (webhook.ErrBusy) when d has
// Concurrency deliveries in flight in this process.
func (s *Set) deliver(ctx context.Context, d *destination, ev webhook.Event, fx effects.Runner) error {
	return effects.DoResult(ctx, fx, effectName(d.cfg.Name), func(ctx context.Context, _ string) (string, error) {
		select {
		case d.slots <- struct{}{}:
		default:
			s.o.Metrics.Emit(metrics.Dims{Destination: d.cfg.Name}, metrics.Counted(metrics.DestinationBusy, 1))
			return "", fmt.Errorf("destination %s: its concurrency limit is reached, not tried: %w", d.cfg.Name, webhook.ErrBusy)
		}
		defer func() { <-d.slots }()
		begin := time.Now()
		a, err := d.sender.send(ctx, ev, newBody(ev, d.cfg.Name))
		a.Took, a.Text = time.Since(begin), answerText(a.Text)
		s.record(ctx, ev.Key(), d.cfg.Name, a, err)
		if err != nil {
			return "", err
		}
		return a.Text, nil
	})
}

// Parked counts DestinationParked for each destination whose delivery
// failed in err, the error of an event the processor parked (Combine's,
// held failures included), once each.
func (s *Set) Parked(err error) {
	for _, name := range failed(err) {
		s.o.Metrics.Emit(metrics.Dims{Destination: name}, metrics.Counted(metrics.DestinationParked, 1))
	}
}

// failed returns the names of the destinations whose delivery failed in
// err, once each, in the order err lists them.
func failed(err error) []string {
	var names []string
	seen := map[string]bool{}
	var walk func(error)
	walk = func(err error) {
		switch e := err.(type) {
		case nil:
		case heldError:
			walk(e.err)
		case *deliveryError:
			if !seen[e.Destination] {
				seen[e.Destination] = true
				names = append(names, e.Destination)
			}
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return names
}

// logTimeout bounds a delivery log write, which outlives the effect's
// deadline: an attempt the deadline cut is logged too, within the time
// the processor keeps after the effects for the ledger and the outcome.
const logTimeout = time.Second

// record notes an attempt in the delivery log and the metrics.
func (s *Set) record(ctx context.Context, key webhook.Key, name string, a answer, err error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), logTimeout)
	defer cancel()
	if lerr := s.o.Log.note(ctx, key, name, a, err == nil, time.Now()); lerr != nil {
		s.o.Logger.Warn("delivery not logged", "destination", name, "reason", lerr.Error())
	}
	ms := []metrics.Metric{metrics.Millis(metrics.DestinationLatency, a.Took)}
	switch {
	case err == nil:
		ms = append(ms, metrics.Counted(metrics.DestinationDelivered, 1))
	case errors.Is(err, ErrGone):
		ms = append(ms, metrics.Counted(metrics.DestinationGone, 1))
	case !webhook.IsPermanent(err):
		ms = append(ms, metrics.Counted(metrics.DestinationRetried, 1))
	}
	// DestinationParked is counted when the processor parks the event
	// (Parked), out of retries too.
	s.o.Metrics.Emit(metrics.Dims{Destination: name}, ms...)
}

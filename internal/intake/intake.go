package intake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

// Outcome is what Accept did with an event.
type Outcome int

// The outcomes. The zero Outcome is none: Accept returns it only with an
// error.
const (
	// Accepted: the event was new; it is claimed, stored and enqueued.
	Accepted Outcome = iota + 1
	// Duplicate: the event was claimed before; no second message was sent
	// unless its claim had waited past the grace period.
	Duplicate
)

// String returns the outcome as the receiver answers it: "accepted" or
// "duplicate".
func (o Outcome) String() string {
	switch o {
	case Accepted:
		return "accepted"
	case Duplicate:
		return "duplicate"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Config tunes an Intake. The zero value of each field means its default.
type Config struct {
	// Grace is how long a RECEIVED claim may wait for its message before
	// a duplicate re-enqueues it; default 2 min.
	Grace time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// FromProviderAPI says the events come from the provider's API (the
	// reconciler), not from webhook deliveries: the API renders an event
	// with other bytes than the webhook did, so a duplicate whose body
	// hash differs is expected and not logged.
	FromProviderAPI bool
	// Metrics records Enqueued for every message sent; nil records nothing.
	Metrics *metrics.Recorder
	// Subjects returns the keyed hashes of the people ev is about, which
	// ride on the claim (inbox.Claim.Subjects) for the processor to
	// index; nil names none.
	Subjects func(ctx context.Context, ev webhook.Event) ([]string, error)
}

// DefaultGrace is Config.Grace's default.
const DefaultGrace = 2 * time.Minute

func (c Config) withDefaults() Config {
	if c.Grace <= 0 {
		c.Grace = DefaultGrace
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// claimStore lists the inbox calls an Intake makes.
type claimStore interface {
	Claim(ctx context.Context, c inbox.Claim) (inbox.Item, error)
	PutPayload(ctx context.Context, it inbox.Item, raw []byte) error
	MarkEnqueued(ctx context.Context, key webhook.Key, cutoff, now time.Time, statuses ...inbox.Status) (inbox.Item, error)
}

// sender lists the queue call an Intake makes.
type sender interface {
	Send(ctx context.Context, env queue.Envelope) error
}

// Intake claims, stores and enqueues verified events.
type Intake struct {
	cfg   Config
	store claimStore
	queue sender
	log   *slog.Logger
}

// New returns an Intake on a ready inbox store and events queue.
func New(cfg Config, store claimStore, queue sender, log *slog.Logger) *Intake {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Intake{cfg: cfg.withDefaults(), store: store, queue: queue, log: log}
}

// Accept makes the claim and stores the payload together (a payload kept
// in S3 after the claim), then sends the message, answering Accepted; or
// handles a duplicate, answering Duplicate. An error means the event may
// not be enqueued and the caller must try again later (the receiver
// answers 5xx, the reconciler keeps its checkpoint before it).
func (in *Intake) Accept(ctx context.Context, ev webhook.Event) (Outcome, error) {
	c, err := in.newClaim(ctx, ev)
	if err != nil {
		return 0, err
	}
	it, err, perr := in.claim(ctx, c)
	switch {
	case errors.Is(err, inbox.ErrAlreadyClaimed):
		return in.again(ctx, c, it, perr)
	case err != nil:
		// Any payload stored is harmless: it carries no claim, and a
		// later claim adopts it.
		return 0, err
	}
	if err := in.send(ctx, ev, it, perr); err != nil {
		return 0, err
	}
	return Accepted, nil
}

// newClaim returns the claim of ev, made now, with the subjects it names
// (Config.Subjects): a claim is never made without them, so nothing is
// stored that an erasure cannot find, and the ack path writes nothing more
// for them.
func (in *Intake) newClaim(ctx context.Context, ev webhook.Event) (inbox.Claim, error) {
	subjects, err := inbox.FindSubjects(ctx, in.cfg.Subjects, ev, in.log)
	if err != nil {
		return inbox.Claim{}, err
	}
	return inbox.Claim{Event: ev, At: in.cfg.Now(), TTL: inbox.DefaultTTL, Subjects: subjects}.Prepared(), nil
}

// claim makes the claim c and stores its payload (perr is that write's
// error): beside the claim or after it (besideClaim, afterClaim), or, when
// it rides inline, with the claim itself.
func (in *Intake) claim(ctx context.Context, c inbox.Claim) (it inbox.Item, err, perr error) {
	if besideClaim(c) {
		stored := make(chan error, 1)
		go func() { stored <- in.storePayload(ctx, c) }()
		it, err = in.store.Claim(ctx, c)
		return it, err, <-stored
	}
	it, err = in.store.Claim(ctx, c)
	if afterClaim(c, it, err) {
		perr = in.storePayload(ctx, c)
	}
	return it, err, perr
}

// storePayload writes the payload of the claim c: the one place the
// intake writes a payload.
func (in *Intake) storePayload(ctx context.Context, c inbox.Claim) error {
	return in.store.PutPayload(ctx, c.PayloadItem(), c.Event.Raw)
}

// besideClaim reports whether the payload of c is written beside its
// claim, at the same time: a payload item, which costs a new event no
// round trip more than the claim, and a duplicate nothing but a write that
// keeps the stored bytes and only stores them when they are missing (a
// claim whose own payload write was lost). A small payload rides in the
// claim instead, and one too large for an item goes to S3 after it.
func besideClaim(c inbox.Claim) bool { return !c.Inline() && !c.External() }

// afterClaim reports whether the payload of c, not written beside its
// claim, is written once the claim answered (it, err): a payload too large
// for an item (c.External) once the claim is won, and any payload of a
// duplicate whose event may lack it (mayLack).
func afterClaim(c inbox.Claim, it inbox.Item, err error) bool {
	if errors.Is(err, inbox.ErrAlreadyClaimed) {
		return mayLack(it, c)
	}
	return err == nil && c.External()
}

// again answers a delivery of an event claimed before (it; perr is this
// delivery's payload write): busy while an id-only event's previous
// notification is being fetched, otherwise a duplicate.
func (in *Intake) again(ctx context.Context, c inbox.Claim, it inbox.Item, perr error) (Outcome, error) {
	if c.Event.IDOnly && it.Status == inbox.Processing {
		// The running fetch may have read the state before this
		// notification's change: have the provider deliver it again.
		return 0, fmt.Errorf("claim %s: %w: its previous notification is being fetched", c.Event.Key(), webhook.ErrBusy)
	}
	if err := in.duplicate(ctx, c.Event, c.PayloadSHA256(), it, c.At, perr); err != nil {
		return 0, err
	}
	return Duplicate, nil
}

// send sends the message of the event ev claimed as it, once its payload
// is stored (perr nil), and counts it; a failure keeps the claim, marked
// unsent.
func (in *Intake) send(ctx context.Context, ev webhook.Event, it inbox.Item, perr error) error {
	err := perr
	if err == nil {
		err = in.queue.Send(ctx, queue.Envelope{Key: it.Key, Type: ev.Type})
	}
	if err != nil {
		return in.unsent(ctx, it, err)
	}
	in.enqueued(ctx, ev)
	return nil
}

// unsent handles a claim whose payload write or send failed (err): the
// claim is kept, never released, since a duplicate may already have been
// answered 200 on its account (the provider's retry of this very
// delivery). It is marked unsent (enqueued_at unsentBackdate before
// sentAt, the last send it had) so that the provider's next delivery
// sends it at once, once it has stored the payload, and the reconciler's
// next run does, whichever comes first. A claim sent on since (by a
// duplicate, or the reconciler) is left as it is; if the mark fails too,
// the claim is sent on once its grace period has passed.
func (in *Intake) unsent(ctx context.Context, it inbox.Item, err error) error {
	_, merr := in.store.MarkEnqueued(ctx, it.Key, it.EnqueuedAt, it.EnqueuedAt.Add(-unsentBackdate))
	if merr != nil && !errors.Is(merr, inbox.ErrNotDue) {
		return fmt.Errorf("%w; marking the claim unsent: %v", err, merr)
	}
	return err
}

// unsentBackdate is how far before its last send a claim whose message
// did not go out is marked as sent: longer than any grace period or the
// reconciler's StuckAfter, so the next delivery and the reconciler's next
// run both find it due.
const unsentBackdate = 24 * time.Hour

// mayLack reports whether the claimed event it may lack the payload that
// c, a later delivery, brings, and still needs it: it is unfinished, its
// payload neither removed nor inline, and kept apart: in a payload item
// (a larger event's, or one made by an earlier version), or in S3 under
// the very object c's bytes name (their hash names it, so writing it
// again writes the same bytes). Its claim's own write may have been lost
// with the function that made it.
func mayLack(it inbox.Item, c inbox.Claim) bool {
	if it.Status == inbox.Done || it.Status == inbox.Ignored || it.PayloadRemoved != "" || it.Payload != nil {
		return false
	}
	if c.External() {
		return it.PayloadObject == c.PayloadItem().PayloadObject
	}
	return it.PayloadObject == ""
}

// duplicate handles an event already claimed (it; sum is this
// delivery's payload hash): it logs a body that differs from the first,
// reports a failed payload write for an event that may still need its
// payload, and re-enqueues a claim that has waited in RECEIVED longer than
// the grace period (a crash between claim and send).
func (in *Intake) duplicate(ctx context.Context, ev webhook.Event, sum string, it inbox.Item, now time.Time, perr error) error {
	if sum != it.PayloadSHA256 && !in.cfg.FromProviderAPI {
		in.log.WarnContext(ctx, "duplicate delivery with a different body",
			"key", ev.Key().String(), "type", ev.Type, "payload_mismatch", 1,
			"stored_sha256", it.PayloadSHA256, "this_sha256", sum)
	}
	if perr != nil && it.Status != inbox.Done && it.Status != inbox.Ignored {
		// The stored claim may lack its payload (its own write failed),
		// and a DEAD event needs it for replay: ask for the event again.
		return fmt.Errorf("store the payload of unfinished %s: %w", it.Key, perr)
	}
	if it.Status != inbox.Received || now.Sub(it.EnqueuedAt) < in.cfg.Grace {
		return nil
	}
	it, err := in.store.MarkEnqueued(ctx, it.Key, now.Add(-in.cfg.Grace), now)
	if errors.Is(err, inbox.ErrNotDue) {
		return nil // another delivery or the processor got there first
	}
	if err != nil {
		return err
	}
	if err := in.send(ctx, ev, it, nil); err != nil {
		return err
	}
	in.log.WarnContext(ctx, "re-enqueued a claim that waited past the grace period",
		"key", ev.Key().String(), "type", ev.Type, "received_at", it.ReceivedAt)
	return nil
}

// enqueued counts a message sent for ev.
func (in *Intake) enqueued(ctx context.Context, ev webhook.Event) {
	in.cfg.Metrics.EmitContext(ctx, metrics.Dims{Provider: ev.Provider, EventType: ev.Type}, metrics.Counted(metrics.Enqueued, 1))
}

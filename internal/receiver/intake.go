package receiver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/webhook"
)

// Intake is the one way a verified event enters hookinbox: claim it in the
// inbox, store its payload, send its envelope, and release the claim when
// the send fails. The webhook Handler uses it for deliveries, and the
// reconciler for events it fetched from the provider's API, so there is
// one implementation of the claim (DESIGN rule 2). An Intake is safe for
// concurrent use.
type Intake struct {
	cfg   Config
	store claimStore
	queue sender
	log   *slog.Logger
}

// NewIntake returns an Intake. Of cfg it uses Grace, TTL, Now and
// FromProviderAPI.
func NewIntake(cfg Config, store claimStore, queue sender, log *slog.Logger) *Intake {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Intake{cfg: cfg.withDefaults(), store: store, queue: queue, log: log}
}

// Accept makes the claim and sends the message, answering Accepted, or
// handles a duplicate, answering Duplicate: a claim that has waited in
// RECEIVED longer than the grace period gets its message sent again (a
// crash between claim and send), once per grace period. An error means
// the event may not be enqueued and the caller must try again later (the
// receiver answers 5xx, the reconciler keeps its checkpoint before it).
func (in *Intake) Accept(ctx context.Context, ev webhook.Event) (string, error) {
	now := in.cfg.Now()
	env := webhook.Envelope{Key: ev.Key(), Type: ev.Type}
	it, err := in.store.Claim(ctx, inbox.Claim{Event: ev, At: now, TTL: in.cfg.TTL})
	if errors.Is(err, inbox.ErrAlreadyClaimed) && ev.IDOnly && it.Status == inbox.Processing {
		// The running fetch may have read the state before this
		// notification's change: have the provider deliver it again.
		return "", fmt.Errorf("claim %s: %w: its previous notification is being fetched", ev.Key(), webhook.ErrBusy)
	}
	if errors.Is(err, inbox.ErrAlreadyClaimed) {
		return Duplicate, in.duplicate(ctx, ev, it, now)
	}
	if err != nil {
		return "", err
	}
	err = in.store.PutPayload(ctx, it.Key, ev.Raw, it.ExpiresAt)
	if err == nil {
		err = in.queue.Send(ctx, env)
	}
	if err != nil {
		if rerr := in.store.Release(ctx, it); rerr != nil {
			// The claim stays in RECEIVED; the next delivery after the grace
			// period, or the reconciler, sends its message.
			return "", fmt.Errorf("%w; releasing the claim: %v", err, rerr)
		}
		return "", err
	}
	return Accepted, nil
}

// duplicate handles an event already claimed: it logs a body that differs
// from the first, and re-enqueues a claim that has waited in RECEIVED
// longer than the grace period (a crash between claim and send).
func (in *Intake) duplicate(ctx context.Context, ev webhook.Event, it inbox.Item, now time.Time) error {
	if sum := inbox.PayloadSHA256(ev.Raw); sum != it.PayloadSHA256 && !in.cfg.FromProviderAPI {
		in.log.WarnContext(ctx, "duplicate delivery with a different body",
			"key", ev.Key().String(), "type", ev.Type, "payload_mismatch", 1,
			"stored_sha256", it.PayloadSHA256, "this_sha256", sum)
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
	if err := in.store.PutPayload(ctx, it.Key, ev.Raw, it.ExpiresAt); err != nil {
		return err
	}
	if err := in.queue.Send(ctx, webhook.Envelope{Key: it.Key, Type: ev.Type}); err != nil {
		return err
	}
	in.log.WarnContext(ctx, "re-enqueued a claim that waited past the grace period",
		"key", ev.Key().String(), "type", ev.Type, "received_at", it.ReceivedAt)
	return nil
}

package privacy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// DefaultRetention is how long a finished event's payload is kept: a week,
// for questions about it, well within the 35 days its dedupe record lives.
const DefaultRetention = 7 * 24 * time.Hour

// retainStore lists the inbox calls of the retention.
type retainStore interface {
	Retained(ctx context.Context, cutoff time.Time, limit int) ([]webhook.Key, error)
	FinishedToErase(ctx context.Context, limit int) ([]webhook.Key, error)
	RemovePayload(ctx context.Context, key webhook.Key, why string, at time.Time) (inbox.Footprint, error)
}

// Retention removes the payloads of events finished (DONE or IGNORED)
// longer than Keep ago, and at once those of finished events an erasure
// waited for (the processor erases them as they finish: these are the
// ones it could not), at most retainLimit of each a run; the dedupe
// records stay.
type Retention struct {
	Store retainStore
	Keep  time.Duration
}

// retainLimit is the most payloads one run removes.
const retainLimit = 1000

// Run removes what is due at now and returns how many payloads it removed.
// An event claimed again meanwhile (an id-only notification) is left.
func (r Retention) Run(ctx context.Context, now time.Time) (int, error) {
	toErase, err := r.Store.FinishedToErase(ctx, retainLimit)
	if err != nil {
		return 0, err
	}
	erased, err := r.remove(ctx, toErase, inbox.RemovedErased, now)
	if err != nil {
		return erased, err
	}
	due, err := r.Store.Retained(ctx, now.Add(-r.Keep), retainLimit)
	if err != nil {
		return erased, err
	}
	expired, err := r.remove(ctx, due, inbox.RemovedExpired, now)
	return erased + expired, err
}

// remove removes the payloads of keys, at now, for why.
func (r Retention) remove(ctx context.Context, keys []webhook.Key, why string, now time.Time) (int, error) {
	removed := 0
	var errs []error
	for _, key := range keys {
		_, err := r.Store.RemovePayload(ctx, key, why, now)
		switch {
		case err == nil:
			removed++
		case errors.Is(err, inbox.ErrNotFound), errors.Is(err, inbox.ErrClaimChanged):
		default:
			errs = append(errs, fmt.Errorf("remove the payload of %s (%s): %w", key, why, err))
		}
	}
	return removed, errors.Join(errs...)
}

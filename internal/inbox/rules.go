package inbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// The rules below are the DynamoDB store's, exported so that the in-memory
// store of inboxtest keeps them too (the conformance suite checks both).

// Renewable reports whether it may be claimed again at now by an IDOnly
// notification.
func Renewable(it Item, now time.Time) bool { return renewable(it, now) }

// Normalize returns it with its times as the table stores them (UTC, at
// the table's precision).
func Normalize(it Item) Item { return normalize(it) }

// LeaseRefusal says why it cannot be leased at now (ErrFinished,
// ErrLeaseHeld), or nil.
func LeaseRefusal(it Item, now time.Time) error {
	switch {
	case it.Status == Done || it.Status == Ignored:
		return ErrFinished
	case it.Status == Processing && it.LeaseUntil.UnixMilli() >= now.UnixMilli():
		return ErrLeaseHeld
	}
	return nil
}

// refusedLease is the error of a lease of key the table refused, as the
// item read back after the refusal (it) explains it: ErrFinished,
// ErrLeaseHeld, or ErrLeaseRaced when it shows an event that could be
// leased. It always wraps one of them.
func refusedLease(key webhook.Key, it Item, now time.Time) error {
	why := LeaseRefusal(it, now)
	if why == nil {
		why = ErrLeaseRaced
	}
	return fmt.Errorf("lease %s: %w", key, why)
}

// Enqueueable returns the statuses MarkEnqueued accepts: statuses, or
// RECEIVED when none are given.
func Enqueueable(statuses []Status) []Status {
	if len(statuses) == 0 {
		return []Status{Received}
	}
	return statuses
}

// PendingView returns the part of it the pending index projects.
func PendingView(it Item) Item { return pendingView(it) }

// PendingAll returns Pending from a store's PendingShard: every shard's
// items, oldest EnqueuedAt first, limit in all.
func PendingAll(ctx context.Context, s interface {
	PendingShard(context.Context, int, time.Time, int) ([]Item, error)
}, cutoff time.Time, limit int) ([]Item, error) {
	return pendingAll(ctx, s, cutoff, limit)
}

// CheckSubjects reports a subject hash that is not the hex of a
// SHA-256 (privacy.Hasher's), which a claim cannot store.
func CheckSubjects(hashes []string) error {
	for _, h := range hashes {
		if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("subject hash %q is not the hex of a SHA-256", h)
		}
	}
	return nil
}

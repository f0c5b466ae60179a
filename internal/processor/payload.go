package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// payload returns the event's stored payload (the one the leased item
// carries inline, or its payload item's) or, when none is stored, the one
// its provider's API serves, which it stores for the next attempt. A
// stored notification that only points at the event (an id-only
// provider's, or one provider.Fetch.Pointer recognises) is fetched, fresh
// on every attempt: its state is what the API says now.
func (h *Handler) payload(ctx context.Context, log *slog.Logger, key webhook.Key, it inbox.Item) (raw []byte, fetched bool, err error) {
	stored := it.Payload // inline: no read
	if stored == nil {
		stored, err = h.store.Payload(ctx, key)
		switch {
		case err == nil:
		case !errors.Is(err, inbox.ErrNotFound):
			return nil, false, fmt.Errorf("load payload: %w", err) // transient
		}
	}
	f := h.cfg.Fetch[key.Provider()]
	fetch, canFetch := f.Get, f.Get != nil
	if h.cfg.IDOnly[key.Provider()] || f.Pointer != nil && f.Pointer(stored) {
		if !canFetch {
			return nil, false, webhook.Permanent(fmt.Errorf("%s notifies with a pointer and has no API fetch", key.Provider()))
		}
		raw, err := fetch(ctx, key.EventID(), stored)
		if err != nil {
			return nil, false, fmt.Errorf("fetch %s from the provider's API: %w", key, err)
		}
		log.Info("fetched the event the notification points at from the provider's API")
		return raw, true, nil
	}
	if stored != nil {
		return stored, false, nil
	}
	if !canFetch {
		return nil, false, fmt.Errorf("load payload: none stored and no API fetch for provider %q: %w", key.Provider(), inbox.ErrNotFound)
	}
	raw, err = h.refetch(ctx, log, fetch, key, it)
	return raw, err == nil, err
}

// refetch fetches an event whose payload was lost from its provider's API
// and stores it for the next attempt.
func (h *Handler) refetch(ctx context.Context, log *slog.Logger, fetch func(context.Context, string, []byte) ([]byte, error), key webhook.Key, it inbox.Item) ([]byte, error) {
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

// index indexes a fetched event under the subjects its provider finds in
// it (Config.Subjects, inbox.FindSubjects): an id-only notification names
// no one, the event its provider's API serves does. A failure is the
// infrastructure's: the attempt is retried, so no fetched event goes
// unindexed.
func (h *Handler) index(ctx context.Context, log *slog.Logger, ev webhook.Event, it inbox.Item) error {
	hashes, err := inbox.FindSubjects(ctx, h.cfg.Subjects, ev, log)
	if err != nil {
		return err
	}
	return h.indexSubjects(ctx, ev.Key(), hashes, it.ExpiresAt)
}

// errUnindexed: the subjects the claim carries could not be indexed. The
// attempt is retried, and never parked for it: an event is finished only
// once indexed, while unfinished its claim names its subjects, so an
// erasure always finds it.
var errUnindexed = errors.New("the subjects the claim carries are not indexed")

// indexClaim writes the index entries of the subjects the claim carries
// (the receiver hashed them, off its ack path), before anything else runs.
func (h *Handler) indexClaim(ctx context.Context, it inbox.Item) error {
	if err := h.indexSubjects(ctx, it.Key, it.Subjects, it.ExpiresAt); err != nil {
		return fmt.Errorf("%w: %w", errUnindexed, err)
	}
	return nil
}

// indexSubjects writes the index entries of the event key under hashes,
// expiring with it: the one place the processor indexes subjects.
func (h *Handler) indexSubjects(ctx context.Context, key webhook.Key, hashes []string, expiresAt time.Time) error {
	if len(hashes) == 0 {
		return nil
	}
	return h.store.IndexSubjects(ctx, key, hashes, expiresAt)
}

// eventType is the type the business sees: the one its provider reads
// from the fetched event (provider.Fetch.Type), or else the claimed one.
func (h *Handler) eventType(key webhook.Key, it inbox.Item, raw []byte) string {
	if typ := h.cfg.Fetch[key.Provider()].Type; typ != nil {
		if t := typ(raw); t != "" {
			return t
		}
	}
	return it.EventType
}

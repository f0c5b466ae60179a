package privacy_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// dyingStore is the in-memory store whose writes (removals and marks,
// the progress, the audit record) all fail from the write numbered
// dieAt on: the function died there. It counts, by event, the removals
// that removed something.
type dyingStore struct {
	*inboxtest.Memory
	mu      sync.Mutex
	writes  int
	dieAt   int // 0: never
	removed map[webhook.Key]int
}

var errDied = errors.New("the function died")

func (s *dyingStore) write() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	if s.dieAt > 0 && s.writes >= s.dieAt {
		return errDied
	}
	return nil
}

func (s *dyingStore) RemovePayload(ctx context.Context, key webhook.Key, why string, at time.Time) (inbox.Footprint, error) {
	if err := s.write(); err != nil {
		return inbox.Footprint{}, err
	}
	f, err := s.Memory.RemovePayload(ctx, key, why, at)
	if err == nil && f.Copies() > 0 && !f.Item.EraseWhenFinished {
		s.mu.Lock()
		s.removed[key]++
		s.mu.Unlock()
	}
	return f, err
}

func (s *dyingStore) SaveErasureProgress(ctx context.Context, key webhook.Key, p inbox.Progress) error {
	if err := s.write(); err != nil {
		return err
	}
	return s.Memory.SaveErasureProgress(ctx, key, p)
}

func (s *dyingStore) RecordErasure(ctx context.Context, e inbox.Erasure) error {
	if err := s.write(); err != nil {
		return err
	}
	return s.Memory.RecordErasure(ctx, e)
}

// TestAnErasureCutBetweenAnyTwoWritesIsFinishedByTheNext: an erasure
// asked for by an event (12 finished events of the person, 3 unfinished,
// pages of 5) dies at each of its writes in turn; run again, it erases
// every finished event's payload once, marks every unfinished one, and
// writes one audit record. The record counts what the runs saved in
// their progress: the events of a page cut before its progress was
// written are erased, but not counted (never more than were).
func TestAnErasureCutBetweenAnyTwoWritesIsFinishedByTheNext(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h := privacy.NewHasher(privacy.Keys{"key"})
	sub := []provider.Subject{provider.EmailSubject("jane@example.com")}
	hashes, _ := h.Index(ctx, sub)
	for dieAt := 1; ; dieAt++ {
		mem := inboxtest.NewMemory()
		store := &dyingStore{Memory: mem, removed: map[webhook.Key]int{}, dieAt: dieAt}
		var finished, waiting []webhook.Key
		for i := range 15 {
			ev := webhook.Event{Provider: "stripe", ID: fmt.Sprintf("evt_%02d", i), Type: "customer.created", Raw: []byte(`{}`)}
			it, err := mem.Claim(ctx, inbox.Claim{Event: ev, At: at, TTL: time.Hour, Subjects: hashes})
			if err != nil {
				t.Fatal(err)
			}
			if i >= 12 {
				waiting = append(waiting, it.Key)
				continue
			}
			if err := mem.IndexSubjects(ctx, it.Key, hashes, it.ExpiresAt); err != nil {
				t.Fatal(err)
			}
			if _, err := mem.Lease(ctx, it.Key, "w1", at, time.Minute); err != nil {
				t.Fatal(err)
			}
			if _, err := mem.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Done, At: at, Indexed: true}); err != nil {
				t.Fatal(err)
			}
			finished = append(finished, it.Key)
		}
		e := privacy.NewEraser(store, h, func() time.Time { return at })
		privacy.SetPace(e, 5, func(context.Context) bool { return false })
		req := privacy.Request{Subjects: sub, By: "test", ID: "shopify#redact-9"}
		_, err := e.Erase(ctx, req)
		if err == nil {
			break // it got through every write: every point was tried
		}
		store.dieAt = 0
		if _, err := e.Erase(ctx, req); err != nil {
			t.Fatalf("died at write %d; the next run: %v", dieAt, err)
		}
		for _, k := range finished {
			if it, _ := mem.Get(ctx, k); it.PayloadRemoved != inbox.RemovedErased || store.removed[k] != 1 {
				t.Errorf("died at write %d: %s removed %q, %d times; want erased once", dieAt, k, it.PayloadRemoved, store.removed[k])
			}
		}
		for _, k := range waiting {
			if it, _ := mem.Get(ctx, k); !it.EraseWhenFinished {
				t.Errorf("died at write %d: %s not marked to erase once finished", dieAt, k)
			}
		}
		audits, _ := mem.Erasures(ctx)
		if len(audits) != 1 || audits[0].Events > 15 || audits[0].Waiting > 3 || audits[0].Copies > 12 {
			t.Errorf("died at write %d: audit records %+v; want one, of at most 15 events, 3 waiting, 12 copies", dieAt, audits)
		}
	}
}

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
	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// countingStore is the in-memory store that counts, by event, the
// removals that removed something, fails the removal fail says to, fails
// every write (removals, the progress, the audit record) dies says to
// (the function died there), and fails one whose context is done.
type countingStore struct {
	*inboxtest.Memory
	mu      sync.Mutex
	removed map[webhook.Key]int
	calls   int // removals
	writes  int
	fail    func(call int) bool
	dies    func(write int) bool
}

var errDied = errors.New("the function died")

// write counts a write, and fails it when the function died.
func (s *countingStore) write() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	if s.dies != nil && s.dies(s.writes) {
		return errDied
	}
	return nil
}

func (s *countingStore) RemovePayload(ctx context.Context, key webhook.Key, why string, at time.Time) (inbox.Footprint, error) {
	if err := s.write(); err != nil {
		return inbox.Footprint{}, err
	}
	s.mu.Lock()
	s.calls++
	fail := s.fail != nil && s.fail(s.calls)
	s.mu.Unlock()
	if fail {
		return inbox.Footprint{}, errors.New("connection reset")
	}
	if err := ctx.Err(); err != nil { // as a client does
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

func (s *countingStore) SaveErasureProgress(ctx context.Context, key webhook.Key, p inbox.Progress) error {
	if err := s.write(); err != nil {
		return err
	}
	return s.Memory.SaveErasureProgress(ctx, key, p)
}

func (s *countingStore) RecordErasure(ctx context.Context, e inbox.Erasure) error {
	if err := s.write(); err != nil {
		return err
	}
	return s.Memory.RecordErasure(ctx, e)
}

// TestAShopsErasureGoesOnWhereItStopped: a shop/redact of a shop with 250
// events (230 finished and indexed, 20 claimed, not yet indexed) beside
// another shop's 50 erases a page a run, keeps its progress, goes on
// where it stopped after a run that was cut (a failed removal), removes
// no payload twice, leaves the other shop's events alone, waits for the
// unfinished ones and for the request itself, and is audited once.
func TestAShopsErasureGoesOnWhereItStopped(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h := privacy.NewHasher(privacy.Keys{"key"})
	shopHash := func(domain string) []string {
		hs, err := h.Index(ctx, []provider.Subject{shopify.ShopSubject(domain)})
		if err != nil {
			t.Fatal(err)
		}
		return hs
	}
	mem := inboxtest.NewMemory()
	store := &countingStore{Memory: mem, removed: map[webhook.Key]int{}}
	claim := func(id string, hashes []string) webhook.Key {
		t.Helper()
		ev := webhook.Event{Provider: shopify.Name, ID: id, Type: "orders/paid", Raw: []byte(`{"id":1,"email":"x@example.com"}`)}
		it, err := mem.Claim(ctx, inbox.Claim{Event: ev, At: at, TTL: time.Hour, Subjects: hashes})
		if err != nil {
			t.Fatal(err)
		}
		return it.Key
	}
	done := func(key webhook.Key) {
		t.Helper()
		it, err := mem.Lease(ctx, key, "w1", at, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := mem.IndexSubjects(ctx, key, it.Subjects, it.ExpiresAt); err != nil {
			t.Fatal(err)
		}
		if _, err := mem.Finish(ctx, key, "w1", inbox.Result{Status: inbox.Done, At: at, Indexed: true}); err != nil {
			t.Fatal(err)
		}
	}
	gone, other := shopHash("gone-shop.myshopify.com"), shopHash("other-shop.myshopify.com")
	var finished, waiting, others []webhook.Key
	for i := range 250 {
		key := claim(fmt.Sprintf("gone-%03d", i), gone)
		if i < 230 {
			done(key)
			finished = append(finished, key)
		} else {
			waiting = append(waiting, key)
		}
	}
	for i := range 50 {
		key := claim(fmt.Sprintf("other-%03d", i), other)
		done(key)
		others = append(others, key)
	}
	request := claim("redact-1", gone)
	if _, err := mem.Lease(ctx, request, "w1", at, time.Minute); err != nil {
		t.Fatal(err)
	}

	e := privacy.NewEraser(store, h, func() time.Time { return at })
	pages := 0
	privacy.SetPace(e, 100, func(context.Context) bool { pages++; return pages%2 == 0 }) // one page a run
	req := privacy.Request{Subjects: []provider.Subject{shopify.ShopSubject("Gone-Shop.myshopify.com")}, By: "shopify shop/redact shopify#redact-1", ID: request}
	store.fail = func(call int) bool { return call == 150 } // a run is cut in the middle of a page
	var runs, cut int
	var rep privacy.Report
	for {
		runs++
		if runs > 20 {
			t.Fatal("the erasure never ends")
		}
		var err error
		rep, err = e.Erase(ctx, req)
		if err == nil {
			break
		}
		if !errors.Is(err, privacy.ErrMore) {
			cut++
		}
	}
	if runs < 4 || cut != 1 {
		t.Errorf("the erasure took %d runs, %d cut short; want a page of 100 a run, one cut short", runs, cut)
	}
	for key, n := range store.removed {
		if n > 1 {
			t.Errorf("%s: payload removed %d times", key, n)
		}
	}
	for _, key := range finished {
		if it, _ := mem.Get(ctx, key); it.PayloadRemoved != inbox.RemovedErased {
			t.Fatalf("%s: %+v, want its payload erased", key, it)
		}
	}
	for _, key := range append(waiting, request) {
		if it, _ := mem.Get(ctx, key); !it.EraseWhenFinished || it.PayloadRemoved != "" {
			t.Errorf("%s (%s): marked %v, removed %q; want it waiting, its payload kept", key, it.Status, it.EraseWhenFinished, it.PayloadRemoved)
		}
	}
	for _, key := range others {
		if it, _ := mem.Get(ctx, key); it.PayloadRemoved != "" || it.EraseWhenFinished {
			t.Fatalf("another shop's %s: %+v; want it untouched", key, it)
		}
	}
	audits, _ := mem.Erasures(ctx)
	if len(audits) != 1 || audits[0].Events != 251 || audits[0].Waiting != 21 || !audits[0].At.Equal(at) {
		t.Errorf("audit records %+v; want one, of 251 events, 21 waiting", audits)
	}
	if rep.Found() != 251 || rep.Waiting != 21 {
		t.Errorf("the last run's report: %d events, %d waiting; want the whole erasure's, 251 and 21", rep.Found(), rep.Waiting)
	}
	// Run again (a retry after the answer was lost): nothing more.
	calls := store.calls
	if _, err := e.Erase(ctx, req); err != nil || store.calls != calls {
		t.Errorf("a finished erasure run again: %v, %d more removals; want none", err, store.calls-calls)
	}
	if audits, _ := mem.Erasures(ctx); len(audits) != 1 {
		t.Errorf("audit records after a second run: %d, want 1", len(audits))
	}
}

// TestAnErasureCutByItsDeadlineGoesOn: a page that runs into the
// invocation's deadline (a removal that waits for it) ends the run with
// ErrMore and its progress kept, not with a failure; the next run goes
// on and removes nothing twice.
func TestAnErasureCutByItsDeadlineGoesOn(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h := privacy.NewHasher(privacy.Keys{"key"})
	sub := []provider.Subject{provider.EmailSubject("jane@example.com")}
	hashes, _ := h.Index(ctx, sub)
	mem := inboxtest.NewMemory()
	store := &countingStore{Memory: mem, removed: map[webhook.Key]int{}}
	for i := range 30 {
		ev := webhook.Event{Provider: "stripe", ID: fmt.Sprintf("evt_%02d", i), Type: "customer.created", Raw: []byte(`{}`)}
		it, err := mem.Claim(ctx, inbox.Claim{Event: ev, At: at, TTL: time.Hour})
		if err == nil {
			err = mem.IndexSubjects(ctx, it.Key, hashes, it.ExpiresAt)
		}
		if err == nil {
			finish(t, mem, it.Key, inbox.Done, at)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	e := privacy.NewEraser(store, h, func() time.Time { return at })
	privacy.SetPace(e, 10, func(context.Context) bool { return false })
	req := privacy.Request{Subjects: sub, By: "test", ID: "shopify#redact-2"}
	// The 15th removal waits for the deadline.
	deadline, cancel := context.WithCancel(ctx)
	store.fail = func(call int) bool {
		if call == 15 {
			cancel()
		}
		return false
	}
	if _, err := e.Erase(deadline, req); !errors.Is(err, privacy.ErrMore) {
		t.Fatalf("a run cut by its deadline: %v, want ErrMore", err)
	}
	rep, err := e.Erase(ctx, req)
	if err != nil || rep.Found() != 30 {
		t.Fatalf("the next run: %d events, %v; want all 30", rep.Found(), err)
	}
	for key, n := range store.removed {
		if n > 1 {
			t.Errorf("%s: payload removed %d times", key, n)
		}
	}
	if len(store.removed) != 30 {
		t.Errorf("%d payloads removed, want 30", len(store.removed))
	}
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
		store := &countingStore{Memory: mem, removed: map[webhook.Key]int{}, dies: func(write int) bool { return write >= dieAt }}
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
		store.dies = nil
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

// Package inboxtest is the conformance suite every inbox.Store must pass,
// and the in-memory store (Memory) unit tests use.
// It runs on the in-memory fake and on DynamoDB (dynalite), so the fake
// used by fast unit tests cannot drift from the real store.
package inboxtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// t0 is the suite's clock origin; every time is an offset from it.
var t0 = time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)

// Run runs the suite. newStore returns an empty store for each subtest.
func Run(t *testing.T, newStore func(t *testing.T) inbox.Store) {
	ctx := context.Background()
	runPersonal(t, newStore)
	runTimes(t, newStore)
	claim := func(t *testing.T, s inbox.Store, id string) inbox.Item {
		t.Helper()
		it, err := s.Claim(ctx, inbox.Claim{Event: Event(id), At: t0, TTL: inbox.DefaultTTL})
		if err != nil {
			t.Fatalf("Claim(%s): %v", id, err)
		}
		return it
	}
	lease := func(t *testing.T, s inbox.Store, key webhook.Key, owner string, at time.Time) inbox.Item {
		t.Helper()
		it, err := s.Lease(ctx, key, owner, at, time.Minute)
		if err != nil {
			t.Fatalf("Lease(%s, %s): %v", key, owner, err)
		}
		return it
	}

	t.Run("ClaimWritesReceivedItem", func(t *testing.T) {
		s := newStore(t)
		ev := Event("evt_claim")
		got := claim(t, s, ev.ID)
		want := inbox.Item{
			Key:           "stripe#evt_claim",
			Status:        inbox.Received,
			Provider:      "stripe",
			EventType:     "checkout.session.completed",
			Created:       ev.Created.Truncate(time.Second),
			ReceivedAt:    t0,
			EnqueuedAt:    t0.Truncate(time.Millisecond),
			PayloadSHA256: inbox.PayloadSHA256(ev.Raw),
			ExpiresAt:     t0.Add(inbox.DefaultTTL).Truncate(time.Second),
			Payload:       ev.Raw, // small: it rides in the claim
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Claim item (-want +got):\n%s", diff)
		}
		stored, err := s.Get(ctx, ev.Key())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, stored); diff != "" {
			t.Errorf("stored item (-want +got):\n%s", diff)
		}
	})

	t.Run("DuplicateClaimReturnsStoredItem", func(t *testing.T) {
		s := newStore(t)
		first := claim(t, s, "evt_dup")
		later := Event("evt_dup")
		later.Raw = []byte(`{"id":"evt_dup","changed":true}`)
		got, err := s.Claim(ctx, inbox.Claim{Event: later, At: t0.Add(time.Hour), TTL: inbox.DefaultTTL})
		if !errors.Is(err, inbox.ErrAlreadyClaimed) {
			t.Fatalf("second Claim error = %v, want ErrAlreadyClaimed", err)
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("duplicate Claim returned (-first +got):\n%s", diff)
		}
	})

	t.Run("IDOnlyClaimRenewsOnlyFinished", func(t *testing.T) {
		s := newStore(t)
		ev := webhook.Event{Provider: "gopay", ID: "3000006529", Type: "notification", Raw: []byte(`{"id":3000006529}`), IDOnly: true}
		first, err := s.Claim(ctx, inbox.Claim{Event: ev, At: t0, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		// Pending (RECEIVED, then PROCESSING): a repeat is a duplicate.
		if _, err := s.Claim(ctx, inbox.Claim{Event: ev, At: t0.Add(time.Second), TTL: time.Hour}); !errors.Is(err, inbox.ErrAlreadyClaimed) {
			t.Fatalf("repeat while RECEIVED: err = %v, want ErrAlreadyClaimed", err)
		}
		if _, err := s.Lease(ctx, first.Key, "w1", t0.Add(2*time.Second), time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim(ctx, inbox.Claim{Event: ev, At: t0.Add(3 * time.Second), TTL: time.Hour}); !errors.Is(err, inbox.ErrAlreadyClaimed) {
			t.Fatalf("repeat while PROCESSING: err = %v, want ErrAlreadyClaimed", err)
		}
		if _, err := s.Finish(ctx, first.Key, "w1", inbox.Result{Status: inbox.Done, Outcome: "PAID", At: t0.Add(4 * time.Second)}); err != nil {
			t.Fatal(err)
		}
		// Finished: the next notification claims the key again, RECEIVED.
		again, err := s.Claim(ctx, inbox.Claim{Event: ev, At: t0.Add(5 * time.Second), TTL: time.Hour})
		if err != nil {
			t.Fatalf("notification after DONE: %v", err)
		}
		if again.Status != inbox.Received || !again.ReceivedAt.Equal(t0.Add(5*time.Second)) {
			t.Errorf("renewed claim = %+v", again)
		}
		if stored, err := s.Get(ctx, first.Key); err != nil || stored.Status != inbox.Received || stored.Attempts != 0 {
			t.Errorf("stored after renewal = %+v, %v", stored, err)
		}
		// A Stripe-style event is never renewed.
		st := Event("evt_final")
		it := claim(t, s, "evt_final")
		if _, err := s.Lease(ctx, it.Key, "w1", t0, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Done, At: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Claim(ctx, inbox.Claim{Event: st, At: t0.Add(time.Hour), TTL: time.Hour}); !errors.Is(err, inbox.ErrAlreadyClaimed) {
			t.Errorf("claim of a DONE signed event: err = %v, want ErrAlreadyClaimed", err)
		}
	})

	t.Run("EndHoldLetsTheNextIDOnlyClaimThrough", func(t *testing.T) {
		s := newStore(t)
		ev := webhook.Event{Provider: "gopay", ID: "3000000002", Type: "notification", Raw: []byte(`{"id":3000000002}`), IDOnly: true}
		first, err := s.Claim(ctx, inbox.Claim{Event: ev, At: t0, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		lease(t, s, first.Key, "w1", t0)
		res := inbox.Result{Status: inbox.Ignored, Outcome: "not found at gopay", At: t0.Add(time.Second), RenewAfter: t0.Add(time.Hour)}
		if _, err := s.Finish(ctx, first.Key, "w1", res); err != nil {
			t.Fatal(err)
		}
		if err := s.EndHold(ctx, first.Key); err != nil {
			t.Fatalf("EndHold of an IGNORED event: %v", err)
		}
		if got, err := s.Get(ctx, first.Key); err != nil || got.Status != inbox.Ignored || !got.RenewAfter.IsZero() {
			t.Fatalf("after EndHold: %+v, %v; want IGNORED without RenewAfter", got, err)
		}
		again, err := s.Claim(ctx, inbox.Claim{Event: ev, At: t0.Add(2 * time.Second), TTL: time.Hour})
		if err != nil || again.Status != inbox.Received {
			t.Fatalf("claim after EndHold: %+v, %v; want a new RECEIVED claim", again, err)
		}
	})

	t.Run("IDOnlyClaimHeldOffUntilRenewAfter", func(t *testing.T) {
		s := newStore(t)
		ev := webhook.Event{Provider: "gopay", ID: "3000000001", Type: "notification", Raw: []byte(`{"id":3000000001}`), IDOnly: true}
		first, err := s.Claim(ctx, inbox.Claim{Event: ev, At: t0, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Lease(ctx, first.Key, "w1", t0, time.Minute); err != nil {
			t.Fatal(err)
		}
		until := t0.Add(10 * time.Minute).Truncate(time.Millisecond) // the precision stored
		res := inbox.Result{Status: inbox.Ignored, Outcome: "not found at gopay", At: t0.Add(time.Second), RenewAfter: until}
		if fin, err := s.Finish(ctx, first.Key, "w1", res); err != nil || !fin.RenewAfter.Equal(until) {
			t.Fatalf("Finish = %+v, %v; want RenewAfter %v", fin, err, until)
		}
		// Until RenewAfter every notification is a duplicate of the
		// finished item, which stays as it is.
		for _, at := range []time.Time{t0.Add(2 * time.Second), until.Add(-time.Millisecond)} {
			got, err := s.Claim(ctx, inbox.Claim{Event: ev, At: at, TTL: time.Hour})
			if !errors.Is(err, inbox.ErrAlreadyClaimed) || got.Status != inbox.Ignored || !got.RenewAfter.Equal(until) {
				t.Fatalf("claim at %v: %+v, %v; want ErrAlreadyClaimed with the IGNORED item", at, got, err)
			}
		}
		// From RenewAfter on it is claimed again, without the hold.
		again, err := s.Claim(ctx, inbox.Claim{Event: ev, At: until, TTL: time.Hour})
		if err != nil || again.Status != inbox.Received || !again.RenewAfter.IsZero() {
			t.Fatalf("claim at RenewAfter: %+v, %v; want a new RECEIVED claim", again, err)
		}
		// EndHold lets the next notification through before RenewAfter,
		// once the provider knows the object; only an IGNORED event has
		// a hold to end.
		if err := s.EndHold(ctx, first.Key); !errors.Is(err, inbox.ErrNotHeld) {
			t.Errorf("EndHold of a RECEIVED claim: %v, want ErrNotHeld", err)
		}
		if err := s.EndHold(ctx, "gopay#404"); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("EndHold of no claim: %v, want ErrNotFound", err)
		}
		// A later outcome without RenewAfter clears it.
		if _, err := s.Lease(ctx, first.Key, "w2", until, time.Minute); err != nil {
			t.Fatal(err)
		}
		if fin, err := s.Finish(ctx, first.Key, "w2", inbox.Result{Status: inbox.Done, Outcome: "PAID", At: until.Add(time.Second)}); err != nil || !fin.RenewAfter.IsZero() {
			t.Fatalf("Finish without RenewAfter = %+v, %v", fin, err)
		}
		if stored, err := s.Get(ctx, first.Key); err != nil || !stored.RenewAfter.IsZero() {
			t.Errorf("stored = %+v, %v; want no RenewAfter", stored, err)
		}
	})

	t.Run("ConcurrentClaimsOneWins", func(t *testing.T) {
		s := newStore(t)
		const n = 20
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				_, err := s.Claim(ctx, inbox.Claim{Event: Event("evt_race"), At: t0.Add(time.Duration(i)), TTL: time.Hour})
				errs <- err
			}(i)
		}
		wg.Wait()
		close(errs)
		won, dup := 0, 0
		for err := range errs {
			switch {
			case err == nil:
				won++
			case errors.Is(err, inbox.ErrAlreadyClaimed):
				dup++
			default:
				t.Errorf("Claim: %v", err)
			}
		}
		if won != 1 || dup != n-1 {
			t.Errorf("claims won = %d, duplicates = %d; want 1 and %d", won, dup, n-1)
		}
	})

	t.Run("PayloadStoredOnce", func(t *testing.T) {
		s := newStore(t)
		key := webhook.Key("stripe#evt_pay")
		if _, err := s.Payload(ctx, key); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("Payload before put: err = %v, want ErrNotFound", err)
		}
		for i, body := range []string{`{"n":1}`, `{"n":2}`} {
			it := inbox.Claim{Event: Event("evt_pay"), At: t0.Add(time.Duration(i) * time.Second), TTL: time.Hour}.NewItem()
			if err := s.PutPayload(ctx, it, []byte(body)); err != nil {
				t.Fatalf("PutPayload: %v", err)
			}
		}
		got, err := s.Payload(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != `{"n":1}` {
			t.Errorf("Payload = %s, want the first one stored", got)
		}
	})

	t.Run("PayloadWithoutClaimAndClaimWithoutPayload", func(t *testing.T) {
		// The receiver writes the claim and a large payload at the same
		// time, so either may land first, or alone.
		s := newStore(t)
		ev := LargeEvent("evt_order")
		c := inbox.Claim{Event: ev, At: t0, TTL: time.Hour}
		if err := s.PutPayload(ctx, c.NewItem(), ev.Raw); err != nil {
			t.Fatalf("PutPayload before its claim: %v", err)
		}
		if _, err := s.Get(ctx, ev.Key()); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("a payload alone made a status item: err = %v", err)
		}
		if _, err := s.Claim(ctx, c); err != nil {
			t.Fatalf("Claim after its payload: %v", err)
		}
		// A claim whose payload write failed (and whose release failed
		// too): a later delivery of the event stores the payload.
		lost := LargeEvent("evt_lost")
		it, err := s.Claim(ctx, inbox.Claim{Event: lost, At: t0, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
			t.Fatalf("Payload of a claim without one: err = %v, want ErrNotFound", err)
		}
		dup := inbox.Claim{Event: lost, At: t0.Add(time.Minute), TTL: time.Hour}
		if _, err := s.Claim(ctx, dup); !errors.Is(err, inbox.ErrAlreadyClaimed) {
			t.Fatalf("later delivery: err = %v, want ErrAlreadyClaimed", err)
		}
		if err := s.PutPayload(ctx, dup.NewItem(), lost.Raw); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Payload(ctx, it.Key); err != nil || string(got) != string(lost.Raw) {
			t.Errorf("Payload after the later delivery = %q, %v; want the event's bytes", got, err)
		}
	})

	for _, ev := range []webhook.Event{Event("evt_inline"), kibEvent("evt_inline")} {
		t.Run(fmt.Sprintf("InlinePayloadTravelsWithTheItem/%dB", len(ev.Raw)), func(t *testing.T) {
			inlinePayloadTravelsWithTheItem(t, newStore(t), ev)
		})
	}

	t.Run("LargePayloadKeepsItsOwnItem", func(t *testing.T) {
		s := newStore(t)
		ev := LargeEvent("evt_large")
		c := inbox.Claim{Event: ev, At: t0, TTL: time.Hour}
		if c.Inline() {
			t.Fatalf("a %d-byte payload rides in its claim", len(ev.Raw))
		}
		it, err := s.Claim(ctx, c)
		if err != nil || it.Payload != nil {
			t.Fatalf("Claim = payload %d bytes, %v; want none", len(it.Payload), err)
		}
		if _, err := s.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("Payload before PutPayload: %v, want ErrNotFound", err)
		}
		if err := s.PutPayload(ctx, c.PayloadItem(), ev.Raw); err != nil {
			t.Fatal(err)
		}
		if raw, err := s.Payload(ctx, it.Key); err != nil || string(raw) != string(ev.Raw) {
			t.Errorf("Payload = %d bytes, %v; want the event's %d", len(raw), err, len(ev.Raw))
		}
		got, err := s.Lease(ctx, it.Key, "w1", t0, time.Minute)
		if err != nil || got.Payload != nil {
			t.Errorf("Lease = payload %d bytes, %v; want none (the processor reads the payload item)", len(got.Payload), err)
		}
	})

	t.Run("HugePayloadIsKeptAsAnObjectTheClaimNames", func(t *testing.T) {
		s := newStore(t)
		ev := HugeEvent("evt_huge")
		c := inbox.Claim{Event: ev, At: t0, TTL: time.Hour}.Prepared()
		if !c.External() || c.Inline() {
			t.Fatalf("a %d-byte payload: External %v, Inline %v; want kept in S3", len(ev.Raw), c.External(), c.Inline())
		}
		it, err := s.Claim(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if it.PayloadObject == "" || it.PayloadSHA256 != inbox.PayloadSHA256(ev.Raw) {
			t.Fatalf("Claim = object %q, hash %s; want both", it.PayloadObject, it.PayloadSHA256)
		}
		if got, err := s.Get(ctx, it.Key); err != nil || got.PayloadObject != it.PayloadObject {
			t.Errorf("Get = object %q, %v; want %q", got.PayloadObject, err, it.PayloadObject)
		}
		if _, err := s.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("Payload before PutPayload: %v, want ErrNotFound", err)
		}
		// The object lost, the processor stores what the provider's API
		// serves: it stands in until the object is there.
		fetched := Event("evt_huge").Raw
		if err := s.PutPayload(ctx, c.PayloadItem(), fetched); err != nil {
			t.Fatal(err)
		}
		if raw, err := s.Payload(ctx, it.Key); err != nil || string(raw) != string(fetched) {
			t.Errorf("Payload with the object missing = %d bytes, %v; want the fetched %d", len(raw), err, len(fetched))
		}
		if err := s.PutPayload(ctx, c.PayloadItem(), ev.Raw); err != nil {
			t.Fatal(err)
		}
		if raw, err := s.Payload(ctx, it.Key); err != nil || string(raw) != string(ev.Raw) {
			t.Errorf("Payload = %d bytes, %v; want the event's %d", len(raw), err, len(ev.Raw))
		}
		// Only its claim names an object: a payload this large stored for
		// an item without one has nowhere to go.
		if err := s.PutPayload(ctx, inbox.Item{Key: it.Key, ReceivedAt: t0}, ev.Raw); !errors.Is(err, inbox.ErrNoBodyLocation) {
			t.Errorf("PutPayload without an object: %v, want ErrNoBodyLocation", err)
		}
	})

	t.Run("HugeBodyFetchedAgainIsKeptUnderItsOwnHash", func(t *testing.T) {
		s := newStore(t)
		ev := HugeEvent("evt_hugefetched")
		c := inbox.Claim{Event: ev, At: t0, TTL: time.Hour}
		if _, err := s.Claim(ctx, c); err != nil {
			t.Fatal(err)
		}
		// The object was never written; the processor stores what the
		// provider's API serves, other bytes as large.
		leased := lease(t, s, ev.Key(), "w1", t0)
		fetched := append([]byte(nil), ev.Raw...)
		fetched[len(fetched)-3] = 'y'
		if err := s.PutPayload(ctx, leased, fetched); err != nil {
			t.Fatal(err)
		}
		want := inbox.BodyObject(ev.Key(), inbox.PayloadSHA256(fetched))
		if got, err := s.Get(ctx, ev.Key()); err != nil || got.PayloadObject != want || got.PayloadSHA256 != inbox.PayloadSHA256(ev.Raw) {
			t.Errorf("Get = object %q, hash %s, %v; want the fetched body's object %q, the delivery's hash kept", got.PayloadObject, got.PayloadSHA256, err, want)
		}
		for _, when := range []string{"stored", "and after the delivery's own bytes came late"} {
			if raw, err := s.Payload(ctx, ev.Key()); err != nil || string(raw) != string(fetched) {
				t.Errorf("Payload %s = %d bytes, %v; want the fetched %d", when, len(raw), err, len(fetched))
			}
			if err := s.PutPayload(ctx, c.PayloadItem(), ev.Raw); err != nil {
				t.Fatal(err)
			}
		}
		// Once finished and erased, a body fetched again is not kept.
		if _, err := s.Finish(ctx, ev.Key(), "w1", inbox.Result{Status: inbox.Done, At: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RemovePayload(ctx, ev.Key(), inbox.RemovedErased, t0); err != nil {
			t.Fatal(err)
		}
		if err := s.PutPayload(ctx, leased, fetched); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Get(ctx, ev.Key()); err != nil || got.PayloadObject != "" {
			t.Errorf("Get after the payload was removed and fetched again = object %q, %v; want none", got.PayloadObject, err)
		}
	})

	t.Run("MarkEnqueuedOncePerGrace", func(t *testing.T) {
		s := newStore(t)
		it := claim(t, s, "evt_mark")
		grace := 2 * time.Minute
		now := t0.Add(time.Minute)
		if _, err := s.MarkEnqueued(ctx, it.Key, now.Add(-grace), now); !errors.Is(err, inbox.ErrNotDue) {
			t.Errorf("within grace: err = %v, want ErrNotDue", err)
		}
		now = t0.Add(3 * time.Minute)
		got, err := s.MarkEnqueued(ctx, it.Key, now.Add(-grace), now)
		if err != nil {
			t.Fatalf("after grace: %v", err)
		}
		if !got.EnqueuedAt.Equal(now.Truncate(time.Millisecond)) {
			t.Errorf("EnqueuedAt = %v, want %v", got.EnqueuedAt, now)
		}
		if _, err := s.MarkEnqueued(ctx, it.Key, now.Add(-grace), now); !errors.Is(err, inbox.ErrNotDue) {
			t.Errorf("second mark in the same grace period: err = %v, want ErrNotDue", err)
		}
		if _, err := s.MarkEnqueued(ctx, "stripe#evt_none", now, now); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("missing item: err = %v, want ErrNotFound", err)
		}
		lease(t, s, it.Key, "w1", now)
		later := now.Add(time.Hour)
		if _, err := s.MarkEnqueued(ctx, it.Key, later, later); !errors.Is(err, inbox.ErrNotDue) {
			t.Errorf("PROCESSING item: err = %v, want ErrNotDue", err)
		}
		if _, err := s.MarkEnqueued(ctx, it.Key, later, later, inbox.Processing); err != nil {
			t.Errorf("PROCESSING item with Processing allowed: %v", err)
		}
	})

	t.Run("LeaseLifecycle", func(t *testing.T) {
		s := newStore(t)
		it := claim(t, s, "evt_lease")
		got := lease(t, s, it.Key, "w1", t0)
		if got.Status != inbox.Processing || got.LeaseOwner != "w1" || got.Attempts != 1 || got.TakenFrom != "" {
			t.Errorf("after Lease: status %s owner %q attempts %d; want PROCESSING w1 1", got.Status, got.LeaseOwner, got.Attempts)
		}
		if !got.LeaseUntil.Equal(t0.Add(time.Minute).Truncate(time.Millisecond)) {
			t.Errorf("LeaseUntil = %v, want %v", got.LeaseUntil, t0.Add(time.Minute))
		}
		if _, err := s.Lease(ctx, it.Key, "w2", t0.Add(time.Second), time.Minute); !errors.Is(err, inbox.ErrLeaseHeld) {
			t.Errorf("Lease while held: err = %v, want ErrLeaseHeld", err)
		}
		// The lease is abandoned: w2 takes it over after lease_until.
		got = lease(t, s, it.Key, "w2", t0.Add(2*time.Minute))
		if got.LeaseOwner != "w2" || got.Attempts != 2 || got.TakenFrom != "w1" {
			t.Errorf("takeover: owner %q attempts %d taken from %q; want w2 2 w1", got.LeaseOwner, got.Attempts, got.TakenFrom)
		}
		if _, err := s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Done, At: t0}); !errors.Is(err, inbox.ErrLeaseLost) {
			t.Errorf("Finish by the old owner: err = %v, want ErrLeaseLost", err)
		}
		done, err := s.Finish(ctx, it.Key, "w2", inbox.Result{Status: inbox.Done, Outcome: "3 effects", At: t0.Add(3 * time.Minute)})
		if err != nil {
			t.Fatalf("Finish: %v", err)
		}
		if done.Status != inbox.Done || done.Outcome != "3 effects" || done.LeaseOwner != "" || !done.ProcessedAt.Equal(t0.Add(3*time.Minute)) {
			t.Errorf("after Finish: %+v", done)
		}
		if _, err := s.Lease(ctx, it.Key, "w3", t0.Add(time.Hour), time.Minute); !errors.Is(err, inbox.ErrFinished) {
			t.Errorf("Lease of DONE: err = %v, want ErrFinished", err)
		}
		if _, err := s.Lease(ctx, "stripe#evt_nope", "w1", t0, time.Minute); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("Lease of missing: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("FailedAndDeadAreLeasedAgain", func(t *testing.T) {
		s := newStore(t)
		it := claim(t, s, "evt_fail")
		lease(t, s, it.Key, "w1", t0)
		got, err := s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Failed, Error: "ses: throttled", At: t0.Add(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != inbox.Failed || got.LastError != "ses: throttled" {
			t.Errorf("after FAILED: status %s last_error %q", got.Status, got.LastError)
		}
		if got := lease(t, s, it.Key, "w2", t0.Add(2*time.Second)); got.TakenFrom != "" {
			t.Errorf("lease after FAILED taken from %q; a finished attempt leaves no lease to take over", got.TakenFrom)
		}
		got, err = s.Finish(ctx, it.Key, "w2", inbox.Result{Status: inbox.Dead, Error: "unknown price", At: t0.Add(3 * time.Second), Infrastructure: true})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != inbox.Dead || got.LastError != "unknown price" || got.Attempts != 2 || got.InfraFailures != 1 {
			t.Errorf("after DEAD: %+v", got)
		}
		if pending, err := s.Pending(ctx, t0.Add(time.Hour), 0); err != nil || len(pending) != 0 {
			t.Errorf("Pending with only a DEAD event: %d items, err %v; want none", len(pending), err)
		}
		// A message for a DEAD event is a redrive from the DLQ: a person
		// sent it back, so it is leased again, keeping its last error, its
		// failure counts started afresh (this lease is attempt 1).
		got = lease(t, s, it.Key, "w3", t0.Add(time.Hour))
		if got.Status != inbox.Processing || got.Attempts != 1 || got.InfraFailures != 0 || got.LastError != "unknown price" ||
			got.Outcome != "" || !got.ProcessedAt.IsZero() || got.LeaseOwner != "w3" {
			t.Errorf("Lease of DEAD: %+v", got)
		}
		if _, err := s.Lease(ctx, it.Key, "w9", t0.Add(time.Hour+time.Second), time.Minute); !errors.Is(err, inbox.ErrLeaseHeld) {
			t.Errorf("second Lease of a redriven DEAD event: err = %v, want ErrLeaseHeld", err)
		}
		// Leased again, it is unfinished: the pending index has it back.
		pending, err := s.Pending(ctx, t0.Add(2*time.Hour), 0)
		if err != nil || len(pending) != 1 || pending[0].Key != it.Key {
			t.Errorf("Pending after the DEAD event was leased again: %+v, err %v; want it", pending, err)
		}
		if _, err := s.Finish(ctx, it.Key, "w3", inbox.Result{Status: inbox.Done, At: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Lease(ctx, it.Key, "w4", t0.Add(2*time.Hour), time.Minute); !errors.Is(err, inbox.ErrFinished) {
			t.Errorf("Lease of DONE after a redrive: err = %v, want ErrFinished", err)
		}
	})

	t.Run("InfrastructureFailuresAreCountedApart", func(t *testing.T) {
		s := newStore(t)
		it := claim(t, s, "evt_infra")
		for i, infra := range []bool{true, false, true} {
			owner := fmt.Sprintf("w%d", i)
			at := t0.Add(time.Duration(i) * time.Minute)
			lease(t, s, it.Key, owner, at)
			if _, err := s.Finish(ctx, it.Key, owner, inbox.Result{Status: inbox.Failed, Error: "timeout", At: at.Add(time.Second), Infrastructure: infra}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Get(ctx, it.Key)
		if err != nil {
			t.Fatal(err)
		}
		if got.Attempts != 3 || got.InfraFailures != 2 || got.Status != inbox.Failed {
			t.Errorf("after 3 failed attempts, 2 of the infrastructure: attempts %d, infra_failures %d, status %s; want 3, 2, FAILED",
				got.Attempts, got.InfraFailures, got.Status)
		}
		// A lease keeps the count.
		if got := lease(t, s, it.Key, "w9", t0.Add(time.Hour)); got.InfraFailures != 2 {
			t.Errorf("lease: infra_failures %d, want 2", got.InfraFailures)
		}
	})

	t.Run("UncountedAttemptIsTakenBack", func(t *testing.T) {
		s := newStore(t)
		it := claim(t, s, "evt_busy")
		for i, uncounted := range []bool{false, true, true} {
			owner := fmt.Sprintf("w%d", i)
			at := t0.Add(time.Duration(i) * time.Minute)
			lease(t, s, it.Key, owner, at)
			if _, err := s.Finish(ctx, it.Key, owner, inbox.Result{Status: inbox.Failed, Error: "busy", At: at.Add(time.Second), Uncounted: uncounted}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Get(ctx, it.Key)
		if err != nil {
			t.Fatal(err)
		}
		if got.Attempts != 1 || got.InfraFailures != 0 {
			t.Errorf("after 3 attempts, 2 uncounted: attempts %d, infra_failures %d; want 1, 0", got.Attempts, got.InfraFailures)
		}
	})

	t.Run("IgnoredIsNotLeasedAgain", func(t *testing.T) {
		s := newStore(t)
		it := claim(t, s, "evt_ign")
		lease(t, s, it.Key, "w1", t0)
		if _, err := s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Ignored, Outcome: "no handler", At: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Lease(ctx, it.Key, "w2", t0.Add(time.Hour), time.Minute); !errors.Is(err, inbox.ErrFinished) {
			t.Errorf("Lease of IGNORED: err = %v, want ErrFinished", err)
		}
	})

	t.Run("ConcurrentLeasesOneWins", func(t *testing.T) {
		s := newStore(t)
		it := claim(t, s, "evt_lrace")
		const n = 10
		var wg sync.WaitGroup
		var mu sync.Mutex
		var owners []string
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				owner := fmt.Sprintf("w%d", i)
				_, err := s.Lease(ctx, it.Key, owner, t0, time.Minute)
				if err == nil {
					mu.Lock()
					owners = append(owners, owner)
					mu.Unlock()
				} else if !errors.Is(err, inbox.ErrLeaseHeld) {
					t.Errorf("Lease: %v", err)
				}
			}(i)
		}
		wg.Wait()
		if len(owners) != 1 {
			t.Fatalf("leases granted to %v, want exactly one", owners)
		}
		got, err := s.Get(ctx, it.Key)
		if err != nil {
			t.Fatal(err)
		}
		if got.LeaseOwner != owners[0] || got.Attempts != 1 {
			t.Errorf("stored owner %q attempts %d; want %q 1", got.LeaseOwner, got.Attempts, owners[0])
		}
	})

	t.Run("RefusedLeasesSayWhy", func(t *testing.T) {
		// Workers lease one event and finish each attempt FAILED while the
		// others try: a refused lease always wraps why (held, or raced when
		// the event read back could be leased), never nothing.
		s := newStore(t)
		it := claim(t, s, "evt_lwhy")
		const workers, rounds = 4, 15
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				owner := fmt.Sprintf("w%d", w)
				for i := range rounds {
					at := t0.Add(time.Duration(i) * time.Millisecond)
					_, err := s.Lease(ctx, it.Key, owner, at, time.Minute)
					switch {
					case err == nil:
						if _, err := s.Finish(ctx, it.Key, owner, inbox.Result{Status: inbox.Failed, Error: "throttled", At: at}); err != nil {
							t.Errorf("Finish: %v", err)
						}
					case !errors.Is(err, inbox.ErrLeaseHeld) && !errors.Is(err, inbox.ErrLeaseRaced), strings.Contains(err.Error(), "%!"):
						t.Errorf("refused Lease: %v; want ErrLeaseHeld or ErrLeaseRaced", err)
					}
				}
			})
		}
		wg.Wait()
	})

	t.Run("RequeueKeepsTheReasonAndStartsTheCountsAfresh", func(t *testing.T) {
		s := newStore(t)
		it := claim(t, s, "evt_rq")
		for i := range 3 {
			owner := fmt.Sprintf("w%d", i)
			lease(t, s, it.Key, owner, t0.Add(time.Duration(i)*time.Second))
			if _, err := s.Finish(ctx, it.Key, owner, inbox.Result{Status: inbox.Failed, Error: "throttled", At: t0.Add(time.Duration(i) * time.Second), Infrastructure: true}); err != nil {
				t.Fatal(err)
			}
		}
		lease(t, s, it.Key, "w1", t0.Add(time.Minute))
		if _, err := s.Requeue(ctx, it.Key, t0.Add(time.Minute+time.Second)); !errors.Is(err, inbox.ErrLeaseHeld) {
			t.Errorf("Requeue under live lease: err = %v, want ErrLeaseHeld", err)
		}
		if _, err := s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Dead, Error: "mapping gap", At: t0.Add(time.Minute + time.Second), Infrastructure: true}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Requeue(ctx, it.Key, t0.Add(time.Hour))
		if err != nil {
			t.Fatalf("Requeue of DEAD: %v", err)
		}
		if got.Status != inbox.Failed || got.Attempts != 0 || got.InfraFailures != 0 || got.LastError != "mapping gap" || !got.ProcessedAt.IsZero() {
			t.Errorf("after Requeue: %+v; want FAILED, counts afresh, the reason kept", got)
		}
		if got := lease(t, s, it.Key, "w2", t0.Add(time.Hour)); got.Attempts != 1 || got.InfraFailures != 0 {
			t.Errorf("lease after Requeue: attempts %d infra_failures %d, want 1 and 0", got.Attempts, got.InfraFailures)
		}
		if _, err := s.Finish(ctx, it.Key, "w2", inbox.Result{Status: inbox.Done, At: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Requeue(ctx, it.Key, t0.Add(2*time.Hour)); !errors.Is(err, inbox.ErrFinished) {
			t.Errorf("Requeue of DONE: err = %v, want ErrFinished", err)
		}
		if _, err := s.Requeue(ctx, "stripe#evt_none", t0); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("Requeue of missing: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("PendingListsUnfinishedOlderThanCutoff", func(t *testing.T) {
		s := newStore(t)
		for i, id := range []string{"evt_p1", "evt_p2", "evt_p3", "evt_p4"} {
			at := t0.Add(time.Duration(i) * time.Minute)
			if _, err := s.Claim(ctx, inbox.Claim{Event: Event(id), At: at, TTL: time.Hour}); err != nil {
				t.Fatal(err)
			}
		}
		// evt_p2 finishes; evt_p4 is newer than the cutoff.
		lease(t, s, "stripe#evt_p2", "w", t0.Add(time.Minute))
		if _, err := s.Finish(ctx, "stripe#evt_p2", "w", inbox.Result{Status: inbox.Done, At: t0.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Pending(ctx, t0.Add(3*time.Minute), 0)
		if err != nil {
			t.Fatalf("Pending: %v", err)
		}
		var keys []webhook.Key
		for _, it := range got {
			keys = append(keys, it.Key)
		}
		want := []webhook.Key{"stripe#evt_p1", "stripe#evt_p3"}
		if diff := cmp.Diff(want, keys); diff != "" {
			t.Errorf("Pending keys (-want +got):\n%s", diff)
		}
		got, err = s.Pending(ctx, t0.Add(3*time.Minute), 1)
		if err != nil || len(got) != 1 {
			t.Errorf("Pending with limit 1: %d items, err %v", len(got), err)
		}
	})

	t.Run("PendingShardListsOneShardOldestFirst", func(t *testing.T) {
		s := newStore(t)
		want := map[int][]webhook.Key{}
		for i := 0; i < 24; i++ {
			ev := Event(fmt.Sprintf("evt_shard%02d", i))
			// Later ids are claimed earlier, so oldest first is not id order.
			if _, err := s.Claim(ctx, inbox.Claim{Event: ev, At: t0.Add(-time.Duration(i) * time.Second), TTL: time.Hour}); err != nil {
				t.Fatal(err)
			}
			shard := inbox.ShardOf(ev.Key())
			want[shard] = append([]webhook.Key{ev.Key()}, want[shard]...)
		}
		total := 0
		for shard := 0; shard < inbox.PendingShards; shard++ {
			got, err := s.PendingShard(ctx, shard, t0.Add(time.Minute), 0)
			if err != nil {
				t.Fatalf("PendingShard(%d): %v", shard, err)
			}
			var keys []webhook.Key
			for _, it := range got {
				keys = append(keys, it.Key)
			}
			if diff := cmp.Diff(want[shard], keys); diff != "" {
				t.Errorf("shard %d (-want +got):\n%s", shard, diff)
			}
			total += len(keys)
			if len(want[shard]) > 1 {
				got, err := s.PendingShard(ctx, shard, t0.Add(time.Minute), 1)
				if err != nil || len(got) != 1 || got[0].Key != want[shard][0] {
					t.Errorf("shard %d with limit 1: %+v, %v; want its oldest", shard, got, err)
				}
			}
		}
		if total != 24 {
			t.Errorf("%d events over all shards, want 24", total)
		}
		if _, err := s.PendingShard(ctx, inbox.PendingShards, t0, 0); err == nil {
			t.Error("PendingShard of a shard out of range: no error")
		}
	})
}

// inlinePayloadTravelsWithTheItem checks that a payload small enough is
// written by the claim and comes back with every read and state change of
// the item: the processor's lease hands it over without another read.
func inlinePayloadTravelsWithTheItem(t *testing.T, s inbox.Store, ev webhook.Event) {
	ctx := context.Background()
	c := inbox.Claim{Event: ev, At: t0, TTL: time.Hour}
	if !c.Inline() {
		t.Fatalf("a %d-byte payload does not ride in its claim", len(ev.Raw))
	}
	it, err := s.Claim(ctx, c)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	check := func(what string, got inbox.Item, err error) {
		t.Helper()
		if err != nil || string(got.Payload) != string(ev.Raw) {
			t.Errorf("%s: payload %q, %v; want the event's bytes", what, got.Payload, err)
		}
	}
	check("Claim", it, nil)
	got, err := s.Get(ctx, it.Key)
	check("Get", got, err)
	if raw, err := s.Payload(ctx, it.Key); err != nil || string(raw) != string(ev.Raw) {
		t.Errorf("Payload = %q, %v; want the event's bytes", raw, err)
	}
	later := Event(ev.ID)
	later.Raw = []byte(`{"id":"evt_inline","changed":true}`)
	got, err = s.Claim(ctx, inbox.Claim{Event: later, At: t0.Add(time.Minute), TTL: time.Hour})
	if !errors.Is(err, inbox.ErrAlreadyClaimed) {
		t.Fatalf("duplicate Claim: %v, want ErrAlreadyClaimed", err)
	}
	check("duplicate Claim (the first bytes)", got, nil)
	got, err = s.Lease(ctx, it.Key, "w1", t0.Add(time.Minute), time.Minute)
	check("Lease", got, err)
	got, err = s.Finish(ctx, it.Key, "w1", inbox.Result{Status: inbox.Failed, Error: "ses: throttled", At: t0.Add(time.Minute)})
	check("Finish", got, err)
	got, err = s.Requeue(ctx, it.Key, t0.Add(time.Hour))
	check("Requeue", got, err)
	pending, err := s.Pending(ctx, t0.Add(2*time.Hour), 0)
	if err != nil || len(pending) != 1 {
		t.Fatalf("Pending: %+v, %v; want the event", pending, err)
	}
	// The pending index projects the status, not the payload: an entry
	// costs one write unit however large the item.
	if p := pending[0]; p.Payload != nil || p.Key != it.Key || p.Status != inbox.Failed || p.EventType != ev.Type {
		t.Errorf("Pending: %+v; want the FAILED event's key, status and type, without its payload", p)
	}
	// A payload item (stored for the key by an older claim, or by a
	// fetch) does not hide the bytes the claim carries.
	if err := s.PutPayload(ctx, inbox.Claim{Event: later, At: t0.Add(time.Minute), TTL: time.Hour}.PayloadItem(), later.Raw); err != nil {
		t.Fatal(err)
	}
	if raw, err := s.Payload(ctx, it.Key); err != nil || string(raw) != string(ev.Raw) {
		t.Errorf("Payload beside a payload item = %q, %v; want the claim's", raw, err)
	}
}

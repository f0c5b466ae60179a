package inboxtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// runPersonal holds a store to the subject index, payload removal,
// retention listing and erasure records.
func runPersonal(t *testing.T, newStore func(t *testing.T) inbox.Store) {
	ctx := context.Background()
	// store stores ev as the intake does: the claim, and the payload
	// beside it when it does not ride inline.
	store := func(t *testing.T, s inbox.Store, ev webhook.Event, at time.Time) inbox.Item {
		t.Helper()
		c := inbox.Claim{Event: ev, At: at, TTL: inbox.DefaultTTL}.Prepared()
		it, err := s.Claim(ctx, c)
		if err != nil {
			t.Fatalf("Claim(%s): %v", ev.ID, err)
		}
		if !c.Inline() {
			if err := s.PutPayload(ctx, c.PayloadItem(), ev.Raw); err != nil {
				t.Fatalf("PutPayload(%s): %v", ev.ID, err)
			}
		}
		return it
	}
	finish := func(t *testing.T, s inbox.Store, key webhook.Key, st inbox.Status, at time.Time) {
		t.Helper()
		if _, err := s.Lease(ctx, key, "w1", at, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Finish(ctx, key, "w1", inbox.Result{Status: st, Outcome: "x", Error: "boom", At: at}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("SubjectIndexFindsEachEventOnce", func(t *testing.T) {
		s := newStore(t)
		exp := t0.Add(inbox.DefaultTTL)
		for _, ix := range []struct {
			key    webhook.Key
			hashes []string
		}{{"stripe#evt_b", []string{"h1", "h2"}}, {"shopify#9", []string{"h2"}}, {"stripe#evt_b", []string{"h2"}}} {
			if err := s.IndexSubjects(ctx, ix.key, ix.hashes, exp); err != nil {
				t.Fatal(err)
			}
		}
		for _, tt := range []struct {
			hashes []string
			want   []webhook.Key
		}{
			{[]string{"h2"}, []webhook.Key{"shopify#9", "stripe#evt_b"}},
			{[]string{"h1", "h-none"}, []webhook.Key{"stripe#evt_b"}},
			{[]string{"h1", "h2"}, []webhook.Key{"shopify#9", "stripe#evt_b"}},
			{[]string{"h-none"}, nil},
		} {
			got, err := s.SubjectEvents(ctx, tt.hashes)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SubjectEvents(%v) (-want +got):\n%s", tt.hashes, diff)
			}
		}
	})

	t.Run("RemovePayloadKeepsTheDedupeRecord", func(t *testing.T) {
		for _, ev := range []webhook.Event{Event("evt_rm_inline"), LargeEvent("evt_rm_item"), HugeEvent("evt_rm_s3")} {
			t.Run(ev.ID, func(t *testing.T) {
				s := newStore(t)
				it := store(t, s, ev, t0)
				before, err := s.Footprint(ctx, it.Key)
				if err != nil || before.Copies() != 1 {
					t.Fatalf("Footprint before = %+v, %v; want one copy", before, err)
				}
				removed, err := s.RemovePayload(ctx, it.Key, inbox.RemovedErased, t0.Add(time.Hour))
				if err != nil || removed.Copies() != 1 {
					t.Fatalf("RemovePayload = %+v, %v; want one copy removed", removed, err)
				}
				if _, err := s.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
					t.Errorf("Payload after removal: err = %v, want ErrNotFound", err)
				}
				got, err := s.Get(ctx, it.Key)
				if err != nil {
					t.Fatal(err)
				}
				want := it
				want.Payload, want.PayloadObject = nil, ""
				want.PayloadRemoved, want.RemovedAt = inbox.RemovedErased, t0.Add(time.Hour)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("status item after removal (-want +got):\n%s", diff)
				}
				// A redelivery is a duplicate and stores nothing again.
				c := inbox.Claim{Event: ev, At: t0.Add(2 * time.Hour), TTL: inbox.DefaultTTL}
				if _, err := s.Claim(ctx, c); !errors.Is(err, inbox.ErrAlreadyClaimed) {
					t.Errorf("Claim after removal: err = %v, want ErrAlreadyClaimed", err)
				}
				if !c.External() {
					if err := s.PutPayload(ctx, c.PayloadItem(), ev.Raw); err != nil {
						t.Errorf("PutPayload after removal: %v", err)
					}
				}
				if raw, err := s.Payload(ctx, it.Key); !errors.Is(err, inbox.ErrNotFound) {
					t.Errorf("Payload after a redelivery = %d bytes, %v; want ErrNotFound", len(raw), err)
				}
				again, err := s.RemovePayload(ctx, it.Key, inbox.RemovedErased, t0.Add(3*time.Hour))
				if err != nil || again.Copies() != 0 {
					t.Errorf("RemovePayload again = %+v, %v; want nothing left", again, err)
				}
				if _, err := s.RemovePayload(ctx, it.Key, inbox.RemovedExpired, t0.Add(4*time.Hour)); err == nil {
					t.Error("RemovePayload expired of a RECEIVED event: no error")
				}
				if got, _ := s.Get(ctx, it.Key); got.PayloadRemoved != inbox.RemovedErased || !got.RemovedAt.Equal(want.RemovedAt) {
					t.Errorf("after a second removal: %s at %v, want the first's (erased at %v)", got.PayloadRemoved, got.RemovedAt, want.RemovedAt)
				}
				if _, err := s.RemovePayload(ctx, "stripe#evt_none", inbox.RemovedErased, t0); !errors.Is(err, inbox.ErrNotFound) {
					t.Errorf("RemovePayload of no event: err = %v, want ErrNotFound", err)
				}
			})
		}
	})

	t.Run("RetainedListsFinishedPayloadsUntilRemoved", func(t *testing.T) {
		s := newStore(t)
		done := store(t, s, Event("evt_keep_done"), t0)
		ignored := store(t, s, LargeEvent("evt_keep_ignored"), t0)
		failed := store(t, s, Event("evt_keep_failed"), t0)
		dead := store(t, s, Event("evt_keep_dead"), t0)
		finish(t, s, done.Key, inbox.Done, t0.Add(time.Minute))
		finish(t, s, ignored.Key, inbox.Ignored, t0.Add(2*time.Minute))
		finish(t, s, failed.Key, inbox.Failed, t0.Add(time.Minute))
		finish(t, s, dead.Key, inbox.Dead, t0.Add(time.Minute))
		retained := func(cutoff time.Time) []webhook.Key {
			t.Helper()
			keys, err := s.Retained(ctx, cutoff, 10)
			if err != nil {
				t.Fatal(err)
			}
			return keys
		}
		if diff := cmp.Diff([]webhook.Key{done.Key, ignored.Key}, retained(t0.Add(time.Hour))); diff != "" {
			t.Errorf("Retained (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]webhook.Key{done.Key}, retained(t0.Add(90*time.Second))); diff != "" {
			t.Errorf("Retained before the second finish (-want +got):\n%s", diff)
		}
		if _, err := s.RemovePayload(ctx, done.Key, inbox.RemovedExpired, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]webhook.Key{ignored.Key}, retained(t0.Add(time.Hour))); diff != "" {
			t.Errorf("Retained after a removal (-want +got):\n%s", diff)
		}
		for _, key := range []webhook.Key{failed.Key, dead.Key} {
			if _, err := s.RemovePayload(ctx, key, inbox.RemovedExpired, t0.Add(time.Hour)); err == nil {
				t.Errorf("RemovePayload(%s, expired) of an unfinished event: no error", key)
			}
			if _, err := s.Payload(ctx, key); err != nil {
				t.Errorf("Payload(%s) after a refused expiry: %v", key, err)
			}
		}
		if got, err := s.Get(ctx, done.Key); err != nil || got.Status != inbox.Done || got.PayloadRemoved != inbox.RemovedExpired {
			t.Errorf("expired event = %+v, %v; want DONE with its payload expired", got, err)
		}
	})

	t.Run("ProviderEventsListsOneProvidersEvents", func(t *testing.T) {
		s := newStore(t)
		shop := Event("9001")
		shop.Provider = "shopify"
		for _, ev := range []webhook.Event{Event("evt_p1"), shop, LargeEvent("evt_p2")} {
			store(t, s, ev, t0)
		}
		if err := s.IndexSubjects(ctx, "stripe#evt_p1", []string{"h1"}, t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		got, err := s.ProviderEvents(ctx, "stripe")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]webhook.Key{"stripe#evt_p1", "stripe#evt_p2"}, got); diff != "" {
			t.Errorf("ProviderEvents (-want +got):\n%s", diff)
		}
	})

	t.Run("ErasuresAreRecorded", func(t *testing.T) {
		s := newStore(t)
		want := []inbox.Erasure{
			{At: t0, By: "cli:ops", SubjectHash: "h1", Events: 2, Copies: 3},
			{At: t0.Add(time.Minute), By: "shopify customers/redact shopify#1", SubjectHash: "h2"},
		}
		for _, e := range want {
			if err := s.RecordErasure(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Erasures(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Erasures (-want +got):\n%s", diff)
		}
	})
}

package privacy_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestHasherRotation: an event is indexed under the newest key only, and
// found under every key listed, so a rotation ("new,old") loses nothing
// indexed before it; no key is an error, never an index in clear.
func TestHasherRotation(t *testing.T) {
	ctx := context.Background()
	sub := []provider.Subject{provider.EmailSubject("jane@example.com")}
	old, _ := privacy.NewHasher(privacy.Keys{"old"}).Index(ctx, sub)
	rotated := privacy.NewHasher(privacy.Keys{"new", "old"})
	now, _ := rotated.Index(ctx, sub)
	if now[0] == old[0] || len(now[0]) != 64 {
		t.Errorf("Index under the new key = %v, old %v; want a different 64-hex hash", now, old)
	}
	lookup, err := rotated.Lookup(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{now[0], old[0]}, lookup); diff != "" {
		t.Errorf("Lookup (-want +got):\n%s", diff)
	}
	if _, err := privacy.NewHasher(privacy.Keys{}).Index(ctx, sub); err == nil {
		t.Error("Index with no key: no error")
	}
}

// TestEraseFindsEventsIndexedUnderAnOldKey: after a rotation an erasure
// still finds, erases and audits an event indexed under the old key; a
// dry run changes nothing.
func TestEraseFindsEventsIndexedUnderAnOldKey(t *testing.T) {
	ctx := context.Background()
	store := inboxtest.NewMemory()
	ev := webhook.Event{Provider: "stripe", ID: "evt_1", Type: "customer.created", Raw: []byte(`{"email":"jane@example.com"}`)}
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	it, err := store.Claim(ctx, inbox.Claim{Event: ev, At: at, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	finish(t, store, it.Key, inbox.Done, at)
	sub := []provider.Subject{provider.EmailSubject("Jane@Example.com")}
	hashes, _ := privacy.NewHasher(privacy.Keys{"old"}).Index(ctx, sub)
	if err := store.IndexSubjects(ctx, it.Key, hashes, it.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	e := privacy.NewEraser(store, privacy.NewHasher(privacy.Keys{"new", "old"}), func() time.Time { return at.Add(time.Minute) })
	dry, err := e.Erase(ctx, privacy.Request{Subjects: sub, By: "cli:ops", DryRun: true})
	if err != nil || len(dry.Events) != 1 || dry.Copies != 1 {
		t.Fatalf("dry run = %+v, %v; want the event and its one copy", dry, err)
	}
	if raw, err := store.Payload(ctx, it.Key); err != nil || raw == nil {
		t.Fatalf("payload after a dry run: %v", err)
	}
	rep, err := e.Erase(ctx, privacy.Request{Subjects: sub, By: "cli:ops"})
	if err != nil || len(rep.Events) != 1 {
		t.Fatalf("Erase = %+v, %v", rep, err)
	}
	if _, err := store.Payload(ctx, it.Key); err == nil {
		t.Error("payload still stored after the erasure")
	}
	audits, _ := store.Erasures(ctx)
	want := []inbox.Erasure{{At: at.Add(time.Minute), By: "cli:ops", SubjectHash: rep.SubjectHash, Events: 1, Copies: 1}}
	if diff := cmp.Diff(want, audits); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
}

// finish runs one attempt of the event key that ends in status st.
func finish(t *testing.T, s inbox.Store, key webhook.Key, st inbox.Status, at time.Time) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Lease(ctx, key, "w1", at, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(ctx, key, "w1", inbox.Result{Status: st, At: at}); err != nil {
		t.Fatal(err)
	}
}

// TestAnErasureWithinAShopTouchesOnlyItsShop: one Shopify app, two
// shops, one person's email at both. An erasure within shop A marks or
// erases shop A's events, finished (indexed) or not (found by their
// claim), and the other providers' events of the email, and leaves every
// one of shop B's alone; its listing within shop B lists none of shop A's.
func TestAnErasureWithinAShopTouchesOnlyItsShop(t *testing.T) {
	ctx := context.Background()
	store := inboxtest.NewMemory()
	h := privacy.NewHasher(privacy.Keys{"k"})
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	email := provider.EmailSubject("jane@example.com")
	shopA, shopB := provider.Subject("shopify:shop:a.myshopify.com"), provider.Subject("shopify:shop:b.myshopify.com")
	claim := func(prov, id string, finished bool, subjects ...provider.Subject) webhook.Key {
		t.Helper()
		hashes, err := h.Index(ctx, subjects)
		if err != nil {
			t.Fatal(err)
		}
		ev := webhook.Event{Provider: prov, ID: id, Type: "orders/create", Raw: []byte(`{"email":"jane@example.com"}`)}
		it, err := store.Claim(ctx, inbox.Claim{Event: ev, At: at, TTL: time.Hour, Subjects: hashes})
		if err != nil {
			t.Fatal(err)
		}
		if finished {
			if err := store.IndexSubjects(ctx, it.Key, hashes, it.ExpiresAt); err != nil {
				t.Fatal(err)
			}
			finish(t, store, it.Key, inbox.Done, at)
		}
		return it.Key
	}
	aDone, aWaiting := claim("shopify", "a1", true, email, shopA), claim("shopify", "a2", false, email, shopA)
	bDone, bWaiting := claim("shopify", "b1", true, email, shopB), claim("shopify", "b2", false, email, shopB)
	stripe := claim("stripe", "evt_1", true, email)
	e := privacy.NewEraser(store, h, func() time.Time { return at })

	listing, err := e.AnswerDataRequest(ctx, []provider.Subject{email}, privacy.Within{Provider: "shopify", Account: shopB}, "test", "data request 1")
	if err != nil {
		t.Fatal(err)
	}
	var listed []webhook.Key
	for _, ev := range listing.Events {
		listed = append(listed, ev.Key)
	}
	if diff := cmp.Diff([]webhook.Key{bDone, bWaiting, stripe}, sorted(listed)); diff != "" {
		t.Errorf("shop B's listing (-want +got):\n%s", diff)
	}

	if _, err := e.Erase(ctx, privacy.Request{Subjects: []provider.Subject{email}, By: "test", Within: privacy.Within{Provider: "shopify", Account: shopA}}); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[webhook.Key]string{aDone: "erased", aWaiting: "waits", stripe: "erased", bDone: "kept", bWaiting: "kept"} {
		it, err := store.Get(ctx, key)
		got := "kept"
		switch {
		case err != nil:
			got = err.Error()
		case it.PayloadRemoved != "":
			got = "erased"
		case it.EraseWhenFinished:
			got = "waits"
		}
		if got != want {
			t.Errorf("%s after shop A's erasure: %s, want %s", key, got, want)
		}
	}
}

func sorted(keys []webhook.Key) []webhook.Key {
	out := append([]webhook.Key(nil), keys...)
	slices.Sort(out)
	return out
}

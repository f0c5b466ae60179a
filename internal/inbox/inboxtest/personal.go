package inboxtest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// storeAboutSubjects stores events about the subjects Hash("h1"),
// Hash("h2") and Hash("h3"): received, claimed about h1 and h2, its index
// not written yet; failed, about h2, likewise; done, about h1, indexed by
// the attempt that finished it; shopify#9, about h2 and h3, only indexed;
// and one more claimed about h3.
func storeAboutSubjects(t *testing.T, s inbox.Store) (received, failed, done webhook.Key) {
	t.Helper()
	ctx := context.Background()
	h1, h2, h3 := Hash("h1"), Hash("h2"), Hash("h3")
	claimWith := func(id string, hashes ...string) webhook.Key {
		t.Helper()
		it, err := s.Claim(ctx, inbox.Claim{Event: Event(id), At: t0, TTL: inbox.DefaultTTL, Subjects: hashes})
		if err != nil {
			t.Fatalf("Claim(%s): %v", id, err)
		}
		if !slices.Equal(it.Subjects, sorted(hashes)) {
			t.Errorf("Claim(%s).Subjects = %v, want %v", id, it.Subjects, sorted(hashes))
		}
		return it.Key
	}
	received = claimWith("evt_sub_received", h1, h2)
	failed = claimWith("evt_sub_failed", h2)
	done = claimWith("evt_sub_done", h1)
	finish(t, s, failed, inbox.Failed, t0)
	it, err := s.Lease(ctx, done, "w1", t0, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.IndexSubjects(ctx, done, it.Subjects, it.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	if it, err := s.Finish(ctx, done, "w1", inbox.Result{Status: inbox.Done, At: t0, Indexed: true}); err != nil || it.Subjects != nil {
		t.Fatalf("Finish(indexed) = %+v, %v; want the subjects dropped", it, err)
	}
	if err := s.IndexSubjects(ctx, "shopify#9", []string{h2, h3}, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	claimWith("evt_sub_other", h3)
	return received, failed, done
}

func subjectEventsFindsClaimsThenTheIndex(t *testing.T, s inbox.Store) {
	received, failed, done := storeAboutSubjects(t, s)
	h1, h2 := Hash("h1"), Hash("h2")
	for _, tt := range []struct {
		hashes []string
		want   []webhook.Key
	}{
		{[]string{h2}, []webhook.Key{received, failed, "shopify#9"}},
		{[]string{h1, Hash("h-none")}, []webhook.Key{received, done}},
		{[]string{h1, h2}, []webhook.Key{received, failed, done, "shopify#9"}},
		{[]string{Hash("h-none")}, nil},
	} {
		for _, limit := range []int{1, 2, 100} {
			got := listAll(t, s, tt.hashes, limit)
			if diff := gocmp.Diff(sorted(tt.want), got); diff != "" {
				t.Errorf("SubjectEvents(%v), %d a call (-want +got):\n%s", tt.hashes, limit, diff)
			}
		}
	}
	if _, _, err := s.SubjectEvents(context.Background(), []string{h1}, "not a cursor", 10); err == nil {
		t.Error("SubjectEvents with a cursor it did not give: no error")
	}
}

// aboutFindsClaimsThenTheIndex: About finds a subject by the claim while
// the event is not indexed, by the index after.
func aboutFindsClaimsThenTheIndex(t *testing.T, s inbox.Store) {
	received, _, done := storeAboutSubjects(t, s)
	h1, h2, h3 := Hash("h1"), Hash("h2"), Hash("h3")
	for _, tt := range []struct {
		key    webhook.Key
		hashes []string
		want   bool
	}{
		{received, []string{h2}, true},
		{received, []string{h3}, false},
		{done, []string{Hash("h-none"), h1}, true},
		{done, []string{h2}, false},
		{"shopify#9", []string{h3}, true},
		{"shopify#404", []string{h1, h2, h3}, false},
	} {
		if got, err := s.About(context.Background(), tt.key, tt.hashes); err != nil || got != tt.want {
			t.Errorf("About(%s, %v) = %v, %v; want %v", tt.key, tt.hashes, got, err, tt.want)
		}
	}
}

// erasureWaitsForAnUnfinishedEvent erases an event that is where to says
// ("" RECEIVED), under a live lease or not: its payload stays until it
// has run once more, then goes.
func erasureWaitsForAnUnfinishedEvent(t *testing.T, s inbox.Store, to inbox.Status, live bool) {
	ctx := context.Background()
	it := store(t, s, LargeEvent("evt_wait"), t0)
	switch {
	case to == inbox.Processing:
		if _, err := s.Lease(ctx, it.Key, "w1", t0, time.Minute); err != nil {
			t.Fatal(err)
		}
	case to != "":
		finish(t, s, it.Key, to, t0)
	}
	at := t0.Add(30 * time.Second)
	if !live {
		at = t0.Add(2 * time.Minute)
	}
	f, err := s.RemovePayload(ctx, it.Key, inbox.RemovedErased, at)
	if err != nil || !f.Item.EraseWhenFinished {
		t.Fatalf("RemovePayload = %+v, %v; want the event marked to erase when finished", f, err)
	}
	if raw, err := s.Payload(ctx, it.Key); err != nil || len(raw) == 0 {
		t.Fatalf("Payload of an unfinished event after an erasure: %d bytes, %v; want it kept", len(raw), err)
	}
	if again, err := s.RemovePayload(ctx, it.Key, inbox.RemovedErased, at); err != nil || !again.Item.EraseWhenFinished {
		t.Errorf("RemovePayload again = %+v, %v", again, err)
	}
	if _, err := s.RemovePayload(ctx, it.Key, inbox.RemovedExpired, at); !errors.Is(err, inbox.ErrClaimChanged) {
		t.Errorf("RemovePayload expired of an unfinished event: %v, want ErrClaimChanged", err)
	}
	if keys, _ := s.FinishedToErase(ctx, 10); len(keys) != 0 {
		t.Errorf("FinishedToErase before it finished: %v", keys)
	}
	// It runs once more (a replay of a parked event, the next attempt of
	// the others), then its payload goes.
	next := at.Add(time.Minute)
	runOnceMore(t, s, it.Key, to, live, next)
	erasedOnceFinished(t, s, it.Key, next)
}

// runOnceMore finishes the event key marked to erase: the live lease's
// owner finishes it, or the next attempt (after a replay of a parked
// event) leases it with its payload and finishes it, still marked.
func runOnceMore(t *testing.T, s inbox.Store, key webhook.Key, to inbox.Status, live bool, next time.Time) {
	t.Helper()
	ctx := context.Background()
	if live {
		if _, err := s.Finish(ctx, key, "w1", inbox.Result{Status: inbox.Done, At: next}); err != nil {
			t.Fatal(err)
		}
		return
	}
	if to == inbox.Dead {
		if _, err := s.Requeue(ctx, key, next); err != nil {
			t.Fatal(err)
		}
	}
	leased, err := s.Lease(ctx, key, "w2", next, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := s.Payload(ctx, key); err != nil || !leased.EraseWhenFinished {
		t.Fatalf("the next attempt: payload %d bytes, %v; marked %v", len(raw), err, leased.EraseWhenFinished)
	}
	if got, err := s.Finish(ctx, key, "w2", inbox.Result{Status: inbox.Done, At: next}); err != nil || !got.EraseWhenFinished {
		t.Fatalf("Finish = %+v, %v; want DONE, still marked", got, err)
	}
}

// erasedOnceFinished checks that the finished event key, marked to
// erase, is listed to erase until its payload is removed at next.
func erasedOnceFinished(t *testing.T, s inbox.Store, key webhook.Key, next time.Time) {
	t.Helper()
	ctx := context.Background()
	keys, err := s.FinishedToErase(ctx, 10)
	if err != nil || !slices.Equal(keys, []webhook.Key{key}) {
		t.Fatalf("FinishedToErase = %v, %v; want %s", keys, err, key)
	}
	if keys, _ := s.Retained(ctx, next.Add(time.Hour), 10); len(keys) != 0 {
		t.Errorf("Retained lists an event to erase: %v", keys)
	}
	if f, err := s.RemovePayload(ctx, key, inbox.RemovedErased, next); err != nil || f.Copies() != 1 {
		t.Fatalf("RemovePayload once finished = %+v, %v; want its copy removed", f, err)
	}
	if _, err := s.Payload(ctx, key); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("Payload after the erasure: %v, want ErrNotFound", err)
	}
	if got, _ := s.Get(ctx, key); got.Status != inbox.Done || got.EraseWhenFinished || got.PayloadRemoved != inbox.RemovedErased {
		t.Errorf("after the erasure: %+v; want DONE, erased, no longer marked", got)
	}
	if keys, _ := s.FinishedToErase(ctx, 10); len(keys) != 0 {
		t.Errorf("FinishedToErase after the erasure: %v", keys)
	}
}

func erasureProgressIsKept(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	key := webhook.Key("shopify#redact-1")
	if got, err := s.ErasureProgress(ctx, key); err != nil || got != (inbox.Progress{}) {
		t.Fatalf("ErasureProgress before any: %+v, %v; want none", got, err)
	}
	want := inbox.Progress{Started: t0, Cursor: `{"source":9}`, Events: 3, Copies: 2, Waiting: 1}
	for _, p := range []inbox.Progress{{Started: t0}, want} {
		if err := s.SaveErasureProgress(ctx, key, p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ErasureProgress(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("ErasureProgress (-want +got):\n%s", diff)
	}
	if _, err := s.Get(ctx, key); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("Get of the event after its progress was saved: %v, want ErrNotFound (no status item made)", err)
	}
}

func dataRequestsAreRecorded(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	want := []inbox.DataRequest{
		{At: t0, By: "shopify customers/data_request shopify#1", Reference: "x.myshopify.com data request 9", SubjectHash: "h1", Report: []byte(`{"events":[]}`)},
		{At: t0.Add(time.Minute), By: "shopify customers/data_request shopify#2", SubjectHash: "h2", Report: []byte(`{}`)},
	}
	for _, r := range append(want, want[0]) { // the same again replaces it
		if err := s.RecordDataRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.DataRequests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("DataRequests (-want +got):\n%s", diff)
	}
}

// removePayloadKeepsTheDedupeRecord removes ev's payload, stored as it
// comes (inline, its own item, an object), and keeps its status item.
func removePayloadKeepsTheDedupeRecord(t *testing.T, s inbox.Store, ev webhook.Event) {
	ctx := context.Background()
	it := store(t, s, ev, t0)
	finish(t, s, it.Key, inbox.Done, t0)
	it, err := s.Get(ctx, it.Key)
	if err != nil {
		t.Fatal(err)
	}
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
	if diff := gocmp.Diff(want, got); diff != "" {
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
	if _, err := s.RemovePayload(ctx, it.Key, inbox.RemovedExpired, t0.Add(4*time.Hour)); err != nil {
		t.Errorf("RemovePayload expired after an erasure: %v", err)
	}
	if got, _ := s.Get(ctx, it.Key); got.PayloadRemoved != inbox.RemovedErased || !got.RemovedAt.Equal(want.RemovedAt) {
		t.Errorf("after a second removal: %s at %v, want the first's (erased at %v)", got.PayloadRemoved, got.RemovedAt, want.RemovedAt)
	}
	if _, err := s.RemovePayload(ctx, "stripe#evt_none", inbox.RemovedErased, t0); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("RemovePayload of no event: err = %v, want ErrNotFound", err)
	}
}

func retainedListsFinishedPayloadsUntilRemoved(t *testing.T, s inbox.Store) {
	ctx := context.Background()
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
	if diff := gocmp.Diff([]webhook.Key{done.Key, ignored.Key}, retained(t0.Add(time.Hour))); diff != "" {
		t.Errorf("Retained (-want +got):\n%s", diff)
	}
	if diff := gocmp.Diff([]webhook.Key{done.Key}, retained(t0.Add(90*time.Second))); diff != "" {
		t.Errorf("Retained before the second finish (-want +got):\n%s", diff)
	}
	if _, err := s.RemovePayload(ctx, done.Key, inbox.RemovedExpired, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff([]webhook.Key{ignored.Key}, retained(t0.Add(time.Hour))); diff != "" {
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
}

func erasuresAreRecorded(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	want := []inbox.Erasure{
		{At: t0, By: "cli:ops", SubjectHash: "h1", Events: 2, Copies: 3, Waiting: 1},
		{At: t0.Add(time.Minute), By: "shopify customers/redact shopify#1", SubjectHash: "h2"},
	}
	for _, e := range append(want, want[1]) { // the same again replaces it
		if err := s.RecordErasure(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Erasures(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("Erasures (-want +got):\n%s", diff)
	}
}

// Hash returns a subject hash as privacy.Hasher makes one (the hex of a
// SHA-256), of name.
func Hash(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// sorted returns keys sorted, nil for none.
func sorted[S ~[]E, E cmp.Ordered](keys S) S {
	if len(keys) == 0 {
		return nil
	}
	out := slices.Clone(keys)
	slices.Sort(out)
	return out
}

// listAll lists every event about hashes, limit a call, each once.
func listAll(t *testing.T, s inbox.Store, hashes []string, limit int) []webhook.Key {
	t.Helper()
	var all []webhook.Key
	cursor := ""
	for calls := 0; ; calls++ {
		keys, next, err := s.SubjectEvents(context.Background(), hashes, cursor, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > limit {
			t.Fatalf("SubjectEvents gave %d keys, more than %d", len(keys), limit)
		}
		all = append(all, keys...)
		if next == "" {
			break
		}
		if calls > 1000 {
			t.Fatal("SubjectEvents never ends")
		}
		cursor = next
	}
	slices.Sort(all)
	return sorted(slices.Compact(all))
}

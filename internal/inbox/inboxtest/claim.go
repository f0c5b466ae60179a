package inboxtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

func claimWritesReceivedItem(t *testing.T, s inbox.Store) {
	ctx := context.Background()
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
}

func duplicateClaimReturnsStoredItem(t *testing.T, s inbox.Store) {
	ctx := context.Background()
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
}

func iDOnlyClaimRenewsOnlyFinished(t *testing.T, s inbox.Store) {
	ctx := context.Background()
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
}

func endHoldLetsTheNextIDOnlyClaimThrough(t *testing.T, s inbox.Store) {
	ctx := context.Background()
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
}

func iDOnlyClaimHeldOffUntilRenewAfter(t *testing.T, s inbox.Store) {
	ctx := context.Background()
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
}

func concurrentClaimsOneWins(t *testing.T, s inbox.Store) {
	ctx := context.Background()
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
}

func claimRefusesSubjectsThatAreNotHashes(t *testing.T, s inbox.Store) {
	ctx := context.Background()
	if _, err := s.Claim(ctx, inbox.Claim{Event: Event("evt_bad_subject"), At: t0, TTL: inbox.DefaultTTL, Subjects: []string{"jane@example.com"}}); err == nil {
		t.Error("Claim with a subject in clear: no error")
	}
	if _, err := s.Get(ctx, "stripe#evt_bad_subject"); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("Get after a refused claim: %v, want ErrNotFound", err)
	}
}

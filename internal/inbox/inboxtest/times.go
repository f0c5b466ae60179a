package inboxtest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// runTimes checks that what an index or a listing sorts by time sorts as
// the times do within a second too: a time on the second (whose RFC 3339
// text, its zeros cut, is "…:00Z") and one 900 ms after it ("…:00.9Z").
func runTimes(t *testing.T, newStore func(t *testing.T) inbox.Store) {
	ctx := context.Background()
	second := t0.Truncate(time.Second).Add(time.Minute)
	later := second.Add(900 * time.Millisecond)

	t.Run("RetainedCutsWithinASecond", func(t *testing.T) {
		s := newStore(t)
		var keys []webhook.Key
		for id, at := range map[string]time.Time{"evt_on_the_second": second, "evt_later_that_second": later} {
			ev := Event(id)
			if _, err := s.Claim(ctx, inbox.Claim{Event: ev, At: t0, TTL: inbox.DefaultTTL}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Lease(ctx, ev.Key(), "w1", at, time.Minute); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Finish(ctx, ev.Key(), "w1", inbox.Result{Status: inbox.Done, Outcome: "x", At: at}); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, ev.Key())
		}
		got, err := s.Retained(ctx, second.Add(500*time.Millisecond), 10)
		if err != nil || !slices.Equal(got, []webhook.Key{"stripe#evt_on_the_second"}) {
			t.Errorf("Retained before the middle of the second = %v, %v; want the event finished on the second", got, err)
		}
		if got, err := s.Retained(ctx, later.Add(time.Millisecond), 10); err != nil || len(got) != 2 {
			t.Errorf("Retained after both = %v, %v; want %v", got, err, keys)
		}
	})

	t.Run("AuditRecordsListOldestFirstWithinASecond", func(t *testing.T) {
		s := newStore(t)
		erasures := []inbox.Erasure{{At: second, By: "cli:ops", SubjectHash: "h1"}, {At: later, By: "cli:ops", SubjectHash: "h1"}}
		requests := []inbox.DataRequest{{At: second, By: "shopify", Report: []byte("{}")}, {At: later, By: "shopify", Report: []byte("{}")}}
		for i := range 2 {
			if err := s.RecordErasure(ctx, erasures[1-i]); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordDataRequest(ctx, requests[1-i]); err != nil {
				t.Fatal(err)
			}
		}
		gotErasures, err := s.Erasures(ctx)
		if diff := cmp.Diff(erasures, gotErasures); err != nil || diff != "" {
			t.Errorf("Erasures (-want +got), %v:\n%s", err, diff)
		}
		gotRequests, err := s.DataRequests(ctx)
		if diff := cmp.Diff(requests, gotRequests); err != nil || diff != "" {
			t.Errorf("DataRequests (-want +got), %v:\n%s", err, diff)
		}
	})
}

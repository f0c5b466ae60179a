package processor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/gopay"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestNotFoundHoldDependsOnEarlierClaims: an id its provider does not know
// at its first claim is held off for NotFoundHold only, so the next
// notification fetches it again; once the fetcher's count says an earlier
// claim found nothing either, the claim is not retried and is held off for
// NotFoundWindow; a fetcher that counts nothing gets the window as before.
func TestNotFoundHoldDependsOnEarlierClaims(t *testing.T) {
	for _, tc := range []struct {
		name      string
		counts    []int // the count each fetch reports; -1: an error without a count
		wantTries int
		wantHold  time.Duration
	}{
		{"first claim", []int{1, 2}, 2, processor.DefaultNotFoundHold},
		{"an earlier claim found nothing", []int{3}, 1, processor.DefaultNotFoundWindow},
		{"a fetcher that does not count", []int{-1, -1}, 2, processor.DefaultNotFoundWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fetches := 0
			fetch := func(_ context.Context, id string, _ []byte) ([]byte, error) {
				n := tc.counts[min(fetches, len(tc.counts)-1)]
				fetches++
				if n < 0 {
					return nil, fmt.Errorf("get %s: %w", id, provider.ErrNotFound)
				}
				return nil, fmt.Errorf("get %s: %w", id, &provider.NotFoundError{Err: provider.ErrNotFound, Count: n})
			}
			f := newFixture(t, func(c *processor.Config) {
				c.Fetch = map[string]provider.Fetch{"gopay": {Get: fetch, Pointer: always}}
				c.IDOnly = map[string]bool{"gopay": true}
			})
			ctx := context.Background()
			in := intake.New(intake.Config{Now: f.now}, f.store, &sentMessages{}, nil)
			evs, err := verifytest.Verifier(gopay.Provider{}, nil).Verify(ctx, webhook.Request{Method: "GET", Query: map[string]string{"id": "3000000009"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := in.Accept(ctx, evs[0]); err != nil {
				t.Fatal(err)
			}
			key := evs[0].Key()
			body := queue.Envelope{Key: key, Type: gopay.Notification}.Marshal()
			var it inbox.Item
			for receive := 1; receive <= 3 && it.Status != inbox.Ignored; receive++ {
				f.clock = f.clock.Add(10 * time.Second)
				if _, err := f.h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{message("gopay", body, receive)}}); err != nil {
					t.Fatal(err)
				}
				if it, err = f.store.Get(ctx, key); err != nil {
					t.Fatal(err)
				}
			}
			if it.Status != inbox.Ignored || fetches != tc.wantTries {
				t.Fatalf("%s after %d fetches, want IGNORED after %d", it.Status, fetches, tc.wantTries)
			}
			if got := it.RenewAfter.Sub(f.clock); got != tc.wantHold {
				t.Errorf("held %v, want %v", got, tc.wantHold)
			}
			if len(f.q.parked) != 0 {
				t.Errorf("parked %+v, want nothing", f.q.parked)
			}
		})
	}
}

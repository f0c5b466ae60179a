package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/providers/mollie"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestFetchedTypeReachesTheBusiness: the business sees an id-only event
// under the type its provider reads from the fetched object (Mollie's
// payment status), not the notification's: the fixture's business has no
// handler for "unknown.type", so the event ends IGNORED, and DONE under a
// status it runs.
func TestFetchedTypeReachesTheBusiness(t *testing.T) {
	tests := []struct {
		status string
		want   inbox.Status
	}{
		{status: "unknown.type", want: inbox.Ignored},
		{status: "paid", want: inbox.Done},
	}
	for _, tt := range tests {
		t.Run(tt.status, func(t *testing.T) {
			payment := []byte(`{"resource":"payment","id":"tr_7UhSN1zuXS","status":"` + tt.status + `"}`)
			f := newFixture(t, func(c *processor.Config) {
				c.Fetch = map[string]provider.Fetch{"mollie": {
					Get:     func(context.Context, string, []byte) ([]byte, error) { return payment, nil },
					Pointer: always,
					Type:    mollie.Status,
				}}
				c.IDOnly = map[string]bool{"mollie": true}
			})
			ctx := context.Background()
			ev := webhook.Event{Provider: "mollie", ID: "tr_7UhSN1zuXS", Type: mollie.Notification, Raw: []byte(`{"id":"tr_7UhSN1zuXS"}`), IDOnly: true}
			if _, err := f.store.Claim(ctx, inbox.Claim{Event: ev, At: t0, TTL: time.Hour}); err != nil {
				t.Fatal(err)
			}
			batch := events.SQSEvent{Records: []events.SQSMessage{message("m1", queue.Envelope{Key: ev.Key(), Type: ev.Type}.Marshal(), 1)}}
			if _, err := f.h.Handle(ctx, batch); err != nil {
				t.Fatal(err)
			}
			it, err := f.store.Get(ctx, ev.Key())
			if err != nil {
				t.Fatal(err)
			}
			if got := it.Status; got != tt.want {
				t.Errorf("status %s (%s), want %s", got, it.Outcome, tt.want)
			}
		})
	}
}

// always is a Fetch.Pointer for which every notification is a pointer.
func always([]byte) bool { return true }

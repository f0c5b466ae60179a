package cli

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestBatchLineNamesTheFetch: the dev stack's batch line says when an
// event's notification only pointed at it (a Stripe thin event, every
// GoPay notification), so what ran is what the processor fetched from the
// provider's API; as the processor's own providers (Processor) say.
func TestBatchLineNamesTheFetch(t *testing.T) {
	thin := verifytest.StripeThin("v1.customer.created", "evt_test_65dev", time.Now(), verifytest.StripeRelated{ID: "cus_1", Type: "customer", URL: "/v1/customers/cus_1"}, "")
	snapshot := verifytest.StripeEvent("customer.created", "evt_1dev", time.Now())
	tests := []struct {
		name    string
		key     webhook.Key
		status  inbox.Status
		payload []byte
		want    string
	}{
		{"a thin event", "stripe#evt_test_65dev", inbox.Done, thin, "done (the notification only points at it: fetched from stripe's API)"},
		{"a snapshot event", "stripe#evt_1dev", inbox.Done, snapshot, "done"},
		{"an id-only notification", "gopay#3000000001", inbox.Ignored, []byte("id=3000000001"), "ignored (no handler) (the notification only points at it: fetched from gopay's API)"},
		{"a provider that fetches nothing", "github#d-1", inbox.Done, []byte(`{"action":"opened"}`), "done"},
		{"a payload not kept in the item", "stripe#evt_test_65dev", inbox.Done, nil, "done"},
	}
	b := &batchLogger{pointers: fetchPointers(context.Background(), testApp().providers(), pipeline.LocalEnv(""))}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b.status = func(context.Context, webhook.Key) (inbox.Item, error) {
				return inbox.Item{Status: tt.status, Payload: tt.payload}, nil
			}
			msg := events.SQSMessage{Body: queue.Envelope{Key: tt.key}.Marshal()}
			if got := b.outcome(context.Background(), msg, false); got != tt.want {
				t.Errorf("outcome = %q, want %q", got, tt.want)
			}
		})
	}
}

package cli

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestBatchLineNamesTheThinFetch: the dev stack's batch line says when an
// event was a thin one, whose content the processor fetched.
func TestBatchLineNamesTheThinFetch(t *testing.T) {
	thin := verifytest.StripeThin("v1.customer.created", "evt_test_65dev", time.Now(), verifytest.StripeRelated{ID: "cus_1", Type: "customer", URL: "/v1/customers/cus_1"}, "")
	snapshot := verifytest.StripeEvent("customer.created", "evt_1dev", time.Now())
	for payload, want := range map[string]string{string(thin): "done (thin: fetched its v2 event and object from Stripe)", string(snapshot): "done"} {
		b := &batchLogger{status: func(context.Context, webhook.Key) (inbox.Item, error) {
			return inbox.Item{Status: inbox.Done, Payload: []byte(payload)}, nil
		}}
		msg := events.SQSMessage{Body: webhook.Envelope{Key: "stripe#evt_1dev"}.Marshal()}
		if got := b.outcome(context.Background(), msg, false); got != want {
			t.Errorf("outcome of %.40s... = %q, want %q", payload, got, want)
		}
	}
}

package pipelinetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
)

// TestLastReceiveFailureIsSentAgainFresh: an event that fails transiently
// on the last receive SQS allows is sent to the events queue again, fresh,
// by the processor (its role's EventsBackoff grant), not left to the
// redrive, which would park it without a reason.
func TestLastReceiveFailureIsSentAgainFresh(t *testing.T) {
	p := New(t)
	p.Stripe.FailNext(500)
	key, body := Checkout("lastreceive", 1, time.Now().Add(-time.Minute))
	p.Deliver(t, body)
	batch := p.ReceiveBatch(t, 1)
	batch.Records[0].Attributes["ApproximateReceiveCount"] = "5" // the template's MAX_RECEIVE_COUNT
	resp, err := p.Process(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("batch item failures %v, want the message acknowledged once sent again", resp.BatchItemFailures)
	}
	it, err := p.Inbox.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if it.Status != inbox.Failed {
		t.Errorf("%s is %s, want FAILED (it will be tried again)", key, it.Status)
	}
	if !strings.Contains(p.Logs.String(), "last receive: sent again as a fresh message") {
		t.Errorf("processor log does not say the message was sent again:\n%s", p.Logs.String())
	}
	if got := Peek(t, p.DLQ); len(got) != 0 {
		t.Errorf("DLQ holds %v, want nothing", got)
	}
}

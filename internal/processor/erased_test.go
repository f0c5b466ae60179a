package processor_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestErasedEventEndsIgnored: a message for an event whose payload was
// erased (one on its way, a DLQ redrive of a parked one) ends IGNORED
// with the reason, and the business never runs.
func TestErasedEventEndsIgnored(t *testing.T) {
	for _, parked := range []bool{false, true} {
		f := newFixture(t)
		ctx := context.Background()
		msg := f.claim(t, "evt_erased", "checkout.session.completed")
		key := webhook.NewKey("stripe", "evt_erased")
		if parked {
			if _, err := f.store.Lease(ctx, key, "w0", f.now(), 0); err != nil {
				t.Fatal(err)
			}
			if _, err := f.store.Finish(ctx, key, "w0", inbox.Result{Status: inbox.Dead, At: f.now()}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.store.RemovePayload(ctx, key, inbox.RemovedErased, f.now()); err != nil {
			t.Fatal(err)
		}
		resp, err := f.h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg}})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("parked %v: Handle = %+v, %v; want acknowledged", parked, resp, err)
		}
		if it := f.status(t, "evt_erased"); it.Status != inbox.Ignored || !strings.Contains(it.Outcome, "erased") {
			t.Errorf("parked %v: item %s %q, want IGNORED, erased", parked, it.Status, it.Outcome)
		}
		if runs := f.biz.Runs(); len(runs) != 0 {
			t.Errorf("parked %v: the business ran: %v", parked, runs)
		}
	}
}

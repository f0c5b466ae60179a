package processor_test

import (
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestThinOwnIDBesideTheSnapshotEvent: a thin notification that names no
// snapshot_event is claimed under its own id, and the snapshot event of
// the same checkout (as the reconciler's /v1/events listing claims it)
// under another. Both run; the business keys the welcome email and the
// invoice by the Checkout Session, so the session gets one of each.
func TestThinOwnIDBesideTheSnapshotEvent(t *testing.T) {
	p := pipelinetest.New(t)
	at := time.Now().Add(-time.Minute)
	snapshotKey, snapshot, thin := thinCheckout(t, p, "thintwin", 1, at, false)
	keys := []webhook.Key{webhook.NewKey("stripe", "evt_test_65thintwin00001"), snapshotKey}
	for _, b := range [][]byte{thin, snapshot} {
		if got := p.Deliver(t, b); got != "accepted" {
			t.Fatalf("delivery: %q, want accepted (two claims)", got)
		}
	}
	p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinal(t, keys) })
	if !p.AllIn(t, keys, inbox.Done) {
		t.Fatalf("not all DONE: DLQ %v", p.DLQReasons(t))
	}
	if got := len(p.SES.Sent()); got != 1 {
		t.Errorf("emails sent = %d, want 1", got)
	}
	if got := p.Stripe.Invoices(); len(got) != 1 {
		t.Errorf("invoices = %v, want 1", got)
	}
}

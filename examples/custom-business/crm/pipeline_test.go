package crm_test

import (
	"math/rand/v2"
	"net/http/httptest"
	"testing"
	"time"

	"example.com/custom-business/crm"

	"github.com/hookinbox/hookinbox/hookinboxtest"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestPipeline runs hookinbox's receiver → SQS → processor on the local
// emulators with this module's business: 20 checkouts, each delivered
// twice in shuffled order, reach the CRM once each, and all end DONE.
func TestPipeline(t *testing.T) {
	f := &fakeCRM{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	p := hookinboxtest.New(t, crm.FromEnv, map[string]string{"CRM_URL": srv.URL})

	var bodies [][]byte
	var keys []webhook.Key
	for range 20 {
		id := hookinboxtest.NewStripeEventID()
		bodies = append(bodies, p.StripeEvent(t, "checkout.session.completed", id))
		keys = append(keys, webhook.Key("stripe#"+id))
	}
	deliveries := append(append([][]byte{}, bodies...), bodies...)
	rand.Shuffle(len(deliveries), func(i, j int) { deliveries[i], deliveries[j] = deliveries[j], deliveries[i] })
	accepted := 0
	for _, b := range deliveries {
		if p.DeliverStripe(t, b) == "accepted" {
			accepted++
		}
	}
	if accepted != len(bodies) {
		t.Errorf("%d deliveries accepted, want %d (one per event)", accepted, len(bodies))
	}
	p.ProcessUntil(t, time.Minute, func() bool { return len(f.calls()) >= len(bodies) && p.AllFinished(t, keys) })
	for _, k := range keys {
		if got := p.Status(t, k); got != "DONE" {
			t.Errorf("%s is %s, want DONE", k, got)
		}
	}
	seen := map[string]int{}
	for _, k := range f.calls() {
		seen[k]++
	}
	if len(f.calls()) != len(bodies) || len(seen) != len(bodies) {
		t.Errorf("the CRM got %d calls with %d distinct keys, want %d of each", len(f.calls()), len(seen), len(bodies))
	}
}

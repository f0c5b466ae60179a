package processor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/webhook"
)

// checkouts returns the keys and bodies of n checkout events of prefix,
// for customers 0 to n-1, created a minute ago.
func checkouts(prefix string, n int) ([]webhook.Key, [][]byte) {
	now := time.Now().Add(-time.Minute)
	keys, bodies := make([]webhook.Key, n), make([][]byte, n)
	for i := range n {
		keys[i], bodies[i] = pipelinetest.Checkout(prefix, i, now)
	}
	return keys, bodies
}

// deliverCheckouts delivers checkouts(prefix, n) to p's receiver, in
// order, and returns their keys.
func deliverCheckouts(t testing.TB, p *pipelinetest.Pipeline, prefix string, n int) []webhook.Key {
	t.Helper()
	keys, bodies := checkouts(prefix, n)
	for _, b := range bodies {
		p.Deliver(t, b)
	}
	return keys
}

// heldEvent returns the event key of a checkout whose invoice call the
// Stripe stand-in held: the call names the checkout session's key
// (stripe-checkout#cs_test_<id>), and each checkout of checkouts is its
// own session, named after its event (stripe#evt_<id>).
func heldEvent(sessionKey string) webhook.Key {
	return webhook.NewKey("stripe", "evt_"+strings.TrimPrefix(sessionKey, "stripe-checkout#cs_test_"))
}

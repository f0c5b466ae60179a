package pipelinetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// Checkout returns the key and body of a checkout.session.completed event
// created at, for customer n: event "evt_<prefix>NNNNN", customer
// "cus_<prefix>NNNNN", email "buyer<n>@example.com". opts come after
// those, so they can change them.
func Checkout(prefix string, n int, at time.Time, opts ...verifytest.Option) (webhook.Key, []byte) {
	id := fmt.Sprintf("evt_%s%05d", prefix, n)
	opts = append([]verifytest.Option{
		verifytest.WithCustomer(fmt.Sprintf("cus_%s%05d", prefix, n)),
		verifytest.WithEmail(fmt.Sprintf("buyer%d@example.com", n)),
	}, opts...)
	return webhook.NewKey("stripe", id), verifytest.StripeEvent("checkout.session.completed", id, at, opts...)
}

// AllFinal reports whether every key's item is in a final status.
func (p *Pipeline) AllFinal(t testing.TB, keys []webhook.Key) bool {
	t.Helper()
	return p.all(t, keys, func(s inbox.Status) bool { return s.Final() })
}

// AllIn reports whether every key's item has status want.
func (p *Pipeline) AllIn(t testing.TB, keys []webhook.Key, want inbox.Status) bool {
	t.Helper()
	return p.all(t, keys, func(s inbox.Status) bool { return s == want })
}

// all reports whether every key's item is claimed and its status ok. An
// error other than inbox.ErrNotFound fails the test.
func (p *Pipeline) all(t testing.TB, keys []webhook.Key, ok func(inbox.Status) bool) bool {
	t.Helper()
	for _, k := range keys {
		it, err := p.Inbox.Get(context.Background(), k)
		if errors.Is(err, inbox.ErrNotFound) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		if !ok(it.Status) {
			return false
		}
	}
	return true
}

// State returns the shop's state: entitlements, subscriptions, emails and
// invoices as the effects recorded them.
func (p *Pipeline) State(t testing.TB) shop.State {
	t.Helper()
	st, err := p.Shop.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// EffectsOnce checks that the stand-ins saw one email per key in all, and
// one invoice per key, each created once for its checkout session (the
// invoice's metadata names the session, not the event), however often the
// events ran. Each key is a checkout of its own (Checkout).
func (p *Pipeline) EffectsOnce(t testing.TB, keys []webhook.Key) {
	t.Helper()
	if got := len(p.SES.Sent()); got != len(keys) {
		t.Errorf("%d emails sent, want one per event (%d)", got, len(keys))
	}
	invoices := map[string]map[string]bool{}
	for _, c := range p.Stripe.Calls() {
		if c.InvoiceID == "" {
			continue
		}
		if invoices[c.Event] == nil {
			invoices[c.Event] = map[string]bool{}
		}
		invoices[c.Event][c.InvoiceID] = true
	}
	if len(invoices) != len(keys) {
		t.Errorf("invoices for %d checkout sessions, want one per event (%d)", len(invoices), len(keys))
	}
	for session, ids := range invoices {
		if len(ids) != 1 {
			t.Errorf("%s: %d invoices, want 1", session, len(ids))
		}
	}
}

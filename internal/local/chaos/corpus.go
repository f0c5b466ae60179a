package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/adyen"
	"github.com/hookinbox/hookinbox/internal/providers/github"
	"github.com/hookinbox/hookinbox/internal/providers/gopay"
	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/internal/providers/standard"

	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
)

// Generate returns a realistic corpus of n events, one JSON line each, as
// `hookinbox chaos --generate` writes it. Every customer has objects of
// their own (sessions, payment intents, charges, invoices, subscriptions,
// orders, payments), and the events about one object name it and its
// relations alike (an invoice's customer and subscription are the ones of
// that customer's subscription events). Most are Stripe events:
// customers buying once (some refunded later), subscribing (created,
// past_due, active again, some cancelled) with the subscription events
// out of order in the file, paying a checkout late (completed unpaid,
// then async_payment_succeeded), and events the shop has no handler for
// (customer.created, payment_intent.succeeded, invoice.paid,
// charge.refunded). About one customer in four comes from another
// provider (deliveryObject lines): a Shopify order whose orders/create,
// orders/updated and orders/paid come in any order; an Adyen payment,
// sometimes refunded, its notifications in any order; a GoPay payment
// notification (paid, refunded, or canceled, which the shop ignores); or
// GitHub and Standard Webhooks deliveries the shop has no handler for.
// The first eight customers are one of each kind, so the first lines of a
// corpus have every kind. The same n,
// seed and start give the same bytes.
func Generate(n int, seed uint64, start time.Time) [][]byte {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	var out [][]byte
	for c := 0; len(out) < n; c++ {
		at := start.Add(time.Duration(c) * 47 * time.Second)
		kind := rng.IntN(14)
		if c < len(firstKinds) {
			kind = firstKinds[c] // a short run (the first lines) has every kind
		}
		var evs [][]byte
		if kind >= 10 { // another provider's customer
			evs = providerEvents(rng, kind-10, c, at)
		} else {
			evs = (&stripeCustomer{c: c, at: at}).events(rng, kind)
		}
		for _, e := range evs {
			var line bytes.Buffer
			if len(out) < n && json.Compact(&line, e) == nil {
				out = append(out, line.Bytes())
			}
		}
	}
	return out
}

// stripeCustomer makes the Stripe events of customer c, from at on.
type stripeCustomer struct {
	c   int
	at  time.Time
	seq int // events made so far
}

// event returns the customer's next event, of type typ.
func (s *stripeCustomer) event(typ string, opts ...verifytest.Option) []byte {
	s.seq++
	id := fmt.Sprintf("evt_chaos%05d%s", s.c, string(rune('a'+s.seq-1)))
	opts = append([]verifytest.Option{verifytest.WithCustomer(fmt.Sprintf("cus_chaos%05d", s.c)),
		verifytest.WithEmail(fmt.Sprintf("buyer%05d@example.com", s.c))}, opts...)
	return verifytest.StripeEvent(typ, id, s.at.Add(time.Duration(s.seq)*time.Minute), opts...)
}

// oid names the customer's n-th object of a kind (in, cs, pi, ...):
// every object is the customer's own, and the events about it name it
// alike.
func (s *stripeCustomer) oid(prefix string, n int) string {
	return fmt.Sprintf("%s_chaos%05d%c", prefix, s.c, 'a'+n)
}

// events returns the customer's events of kind 0 to 9: a one-time
// purchase, a subscription, a delayed payment, or events nobody handles.
func (s *stripeCustomer) events(rng *rand.Rand, kind int) [][]byte {
	switch {
	case kind < 3:
		return s.purchase(rng)
	case kind < 7:
		return s.subscription(rng)
	case kind < 9: // a delayed payment method: completed unpaid, paid later
		cs, pi := verifytest.WithObjectID(s.oid("cs", 0)), verifytest.WithRelated("payment_intent", s.oid("pi", 0))
		return [][]byte{
			s.event("checkout.session.completed", cs, pi, verifytest.WithPaymentStatus("unpaid")),
			s.event("checkout.session.async_payment_succeeded", cs, pi),
		}
	default: // events nobody handles
		return [][]byte{s.event("customer.created"), s.event("customer.updated"),
			s.event("invoice.paid", verifytest.WithObjectID(s.oid("in", 0)), verifytest.WithSubscription(fmt.Sprintf("sub_chaos%05d", s.c), ""),
				verifytest.WithRelated("payment_intent", s.oid("pi", 0)), verifytest.WithRelated("charge", s.oid("ch", 0)))}
	}
}

// purchase is a one-time purchase, sometimes refunded.
func (s *stripeCustomer) purchase(rng *rand.Rand) [][]byte {
	pi, ch := verifytest.WithRelated("payment_intent", s.oid("pi", 0)), s.oid("ch", 0)
	evs := [][]byte{s.event("customer.created"),
		s.event("payment_intent.succeeded", verifytest.WithObjectID(s.oid("pi", 0)), verifytest.WithRelated("latest_charge", ch)),
		s.event("checkout.session.completed", verifytest.WithObjectID(s.oid("cs", 0)), pi)}
	if rng.IntN(3) == 0 {
		evs = append(evs, s.event("charge.refunded", verifytest.WithObjectID(ch), pi))
	}
	return evs
}

// subscription is a subscription and its changes, out of order.
func (s *stripeCustomer) subscription(rng *rand.Rand) [][]byte {
	sub, invoice := fmt.Sprintf("sub_chaos%05d", s.c), verifytest.WithRelated("latest_invoice", s.oid("in", 0))
	evs := [][]byte{
		s.event("checkout.session.completed", verifytest.WithObjectID(s.oid("cs", 0)), verifytest.WithRelated("payment_intent", s.oid("pi", 0)), verifytest.WithSubscription(sub, "")),
		s.event("customer.subscription.created", verifytest.WithSubscription(sub, "active"), invoice),
		s.event("invoice.paid", verifytest.WithObjectID(s.oid("in", 0)), verifytest.WithSubscription(sub, ""),
			verifytest.WithRelated("payment_intent", s.oid("pi", 1)), verifytest.WithRelated("charge", s.oid("ch", 1))),
		s.event("customer.subscription.updated", verifytest.WithSubscription(sub, "past_due"), invoice),
		s.event("customer.subscription.updated", verifytest.WithSubscription(sub, "active"), invoice),
	}
	if rng.IntN(2) == 0 {
		evs = append(evs, s.event("customer.subscription.deleted", verifytest.WithSubscription(sub, "canceled"), invoice))
	}
	rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	return evs
}

// firstKinds are the kinds of the first customers, one of each: a
// purchase, a subscription, a delayed payment, events nobody handles, a
// Shopify order, an Adyen payment, GitHub and Standard Webhooks
// deliveries, a GoPay payment.
var firstKinds = []int{0, 3, 7, 9, 10, 11, 12, 13}

// providerEvents returns the deliveries of customer c of another
// provider, kind 0 to 3, as corpus lines.
func providerEvents(rng *rand.Rand, kind, c int, at time.Time) [][]byte {
	var evs []Event
	switch kind {
	case 0:
		evs = shopifyOrder(rng, c, at)
	case 1:
		evs = adyenPayment(rng, c, at)
	case 3: // a GoPay payment as its API serves it when GoPay notifies
		id := 3_000_000_000 + int64(c)
		state := []string{"PAID", "PAID", "PAID", "PAID", "REFUNDED", "CANCELED"}[rng.IntN(6)]
		body, _ := json.Marshal(standin.GoPayPayment{ID: id, OrderNumber: fmt.Sprintf("order-chaos%05d", c), State: state,
			Amount: int64(10_000 + 100*rng.IntN(90)), Currency: "CZK"})
		evs = []Event{{Provider: gopay.Name, ID: strconv.FormatInt(id, 10), Type: gopay.Notification, Raw: body}}
	default: // deliveries nobody handles: a GitHub issue, a Standard Webhooks invoice
		gh, _ := json.Marshal(map[string]any{"action": "opened", "issue": map[string]any{"number": c, "title": "Chaos issue"},
			"repository": map[string]any{"full_name": "hookinbox/chaos"}})
		std, _ := json.Marshal(map[string]any{"type": "invoice.paid", "timestamp": at.Format(time.RFC3339),
			"data": map[string]any{"id": fmt.Sprintf("inv_chaos%05d", c), "amount": 4900, "currency": "EUR"}})
		evs = []Event{{Provider: github.Name, ID: fmt.Sprintf("chaos-github-%05d", c), Type: "issues", Raw: gh},
			{Provider: standard.Name, ID: fmt.Sprintf("msg_chaos%05d", c), Type: "invoice.paid", Raw: std}}
	}
	rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	lines := make([][]byte, len(evs))
	for i, ev := range evs {
		lines[i] = deliveryLine(ev)
	}
	return lines
}

// shopifyOrder is customer c's Shopify order: created (paid or not yet),
// updated, paid.
func shopifyOrder(rng *rand.Rand, c int, at time.Time) []Event {
	order := 7_100_000_000_000 + int64(c)
	skus := []string{"MUG-BLUE", "TEE-L", "CAP-RED", "POSTER-A2"}
	var items []map[string]any
	total := int64(0)
	for i, n := 0, 1+rng.IntN(3); i < n; i++ {
		q := int64(1 + rng.IntN(3))
		items = append(items, map[string]any{"id": order*10 + int64(i), "variant_id": 40_000_000 + i, "sku": skus[(c+i)%len(skus)], "quantity": q, "price": "19.00"})
		total += 19 * q
	}
	body := func(status string) []byte {
		b, _ := json.Marshal(map[string]any{
			"id": order, "name": fmt.Sprintf("#C%05d", c), "currency": "EUR", "financial_status": status,
			"total_price": fmt.Sprintf("%d.00", total), "created_at": at.Format(time.RFC3339),
			"customer":   map[string]any{"id": 9_200_000_000 + int64(c), "email": fmt.Sprintf("shopper%05d@example.com", c)},
			"line_items": items,
		})
		return b
	}
	created := "pending"
	if rng.IntN(2) == 0 {
		created = "paid"
	}
	id := func(n int) string { return fmt.Sprintf("chaos-shopify-%05d-%d", c, n) }
	return []Event{
		{Provider: shopify.Name, ID: id(1), Type: "orders/create", Raw: body(created)},
		{Provider: shopify.Name, ID: id(2), Type: "orders/updated", Raw: body("paid")},
		{Provider: shopify.Name, ID: fmt.Sprintf("order-%d-paid", order), Type: "orders/paid", Raw: body("paid")}, // keyed by the order
	}
}

// adyenPayment is customer c's Adyen payment, sometimes refunded.
func adyenPayment(rng *rand.Rand, c int, at time.Time) []Event {
	psp := fmt.Sprintf("CHAOSPSP%08d", c)
	item := verifytest.AdyenItem{PspReference: psp, MerchantAccount: "HookinboxChaos", MerchantReference: fmt.Sprintf("order-chaos%05d", c),
		Value: int64(1000 + 100*rng.IntN(50)), Currency: "EUR", EventCode: "AUTHORISATION", Success: true, EventDate: at}
	key := LocalSecrets[adyen.Name][0] // re-signed with the target's key on delivery
	evs := []Event{{Provider: adyen.Name, ID: psp + "-AUTHORISATION", Type: "AUTHORISATION", Raw: verifytest.AdyenNotification(key, item)}}
	if rng.IntN(2) == 0 {
		refund := item
		refund.PspReference, refund.OriginalReference, refund.EventCode = fmt.Sprintf("CHAOSRFD%08d", c), psp, "REFUND"
		refund.EventDate = at.Add(time.Hour)
		evs = append(evs, Event{Provider: adyen.Name, ID: refund.PspReference + "-REFUND", Type: "REFUND", Raw: verifytest.AdyenNotification(key, refund)})
	}
	return evs
}

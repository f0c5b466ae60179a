package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/hookinbox/hookinbox/provider/adyen"
	"github.com/hookinbox/hookinbox/provider/github"
	"github.com/hookinbox/hookinbox/provider/gopay"
	"github.com/hookinbox/hookinbox/provider/shopify"
	"github.com/hookinbox/hookinbox/provider/standard"

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
		cus := fmt.Sprintf("cus_chaos%05d", c)
		mail := fmt.Sprintf("buyer%05d@example.com", c)
		at := start.Add(time.Duration(c) * 47 * time.Second)
		seq := 0
		ev := func(typ string, opts ...verifytest.Option) []byte {
			seq++
			id := fmt.Sprintf("evt_chaos%05d%s", c, string(rune('a'+seq-1)))
			opts = append([]verifytest.Option{verifytest.WithCustomer(cus), verifytest.WithEmail(mail)}, opts...)
			return verifytest.StripeEvent(typ, id, at.Add(time.Duration(seq)*time.Minute), opts...)
		}
		// oid names customer c's n-th object of a kind (in, cs, pi, ...):
		// every object is the customer's own, and the events about it
		// name it alike.
		oid := func(prefix string, n int) string { return fmt.Sprintf("%s_chaos%05d%c", prefix, c, 'a'+n) }
		var evs [][]byte
		kind := rng.IntN(14)
		if c < len(firstKinds) {
			kind = firstKinds[c] // a short run (the first lines) has every kind
		}
		switch {
		case kind >= 10: // another provider's customer
			evs = providerEvents(rng, kind-10, c, at)
		case kind < 3: // a one-time purchase, sometimes refunded
			pi, ch := verifytest.WithRelated("payment_intent", oid("pi", 0)), oid("ch", 0)
			evs = append(evs, ev("customer.created"),
				ev("payment_intent.succeeded", verifytest.WithObjectID(oid("pi", 0)), verifytest.WithRelated("latest_charge", ch)),
				ev("checkout.session.completed", verifytest.WithObjectID(oid("cs", 0)), pi))
			if rng.IntN(3) == 0 {
				evs = append(evs, ev("charge.refunded", verifytest.WithObjectID(ch), pi))
			}
		case kind < 7: // a subscription and its changes, out of order
			sub, invoice := fmt.Sprintf("sub_chaos%05d", c), verifytest.WithRelated("latest_invoice", oid("in", 0))
			evs = append(evs,
				ev("checkout.session.completed", verifytest.WithObjectID(oid("cs", 0)), verifytest.WithRelated("payment_intent", oid("pi", 0)), verifytest.WithSubscription(sub, "")),
				ev("customer.subscription.created", verifytest.WithSubscription(sub, "active"), invoice),
				ev("invoice.paid", verifytest.WithObjectID(oid("in", 0)), verifytest.WithSubscription(sub, ""),
					verifytest.WithRelated("payment_intent", oid("pi", 1)), verifytest.WithRelated("charge", oid("ch", 1))),
				ev("customer.subscription.updated", verifytest.WithSubscription(sub, "past_due"), invoice),
				ev("customer.subscription.updated", verifytest.WithSubscription(sub, "active"), invoice),
			)
			if rng.IntN(2) == 0 {
				evs = append(evs, ev("customer.subscription.deleted", verifytest.WithSubscription(sub, "canceled"), invoice))
			}
			rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
		case kind < 9: // a delayed payment method: completed unpaid, paid later
			cs, pi := verifytest.WithObjectID(oid("cs", 0)), verifytest.WithRelated("payment_intent", oid("pi", 0))
			evs = append(evs,
				ev("checkout.session.completed", cs, pi, verifytest.WithPaymentStatus("unpaid")),
				ev("checkout.session.async_payment_succeeded", cs, pi),
			)
		default: // events nobody handles
			evs = append(evs, ev("customer.created"), ev("customer.updated"),
				ev("invoice.paid", verifytest.WithObjectID(oid("in", 0)), verifytest.WithSubscription(fmt.Sprintf("sub_chaos%05d", c), ""),
					verifytest.WithRelated("payment_intent", oid("pi", 0)), verifytest.WithRelated("charge", oid("ch", 0))))
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

// firstKinds are the kinds of the first customers, one of each: a
// purchase, a subscription, a delayed payment, events nobody handles, a
// Shopify order, an Adyen payment, GitHub and Standard Webhooks
// deliveries, a GoPay payment.
var firstKinds = []int{0, 3, 7, 9, 10, 11, 12, 13}

// providerEvents returns the deliveries of customer c of another
// provider, kind 0 to 3, as corpus lines.
func providerEvents(rng *rand.Rand, kind, c int, at time.Time) [][]byte {
	var evs []Event
	add := func(provider, id, typ string, body []byte) {
		evs = append(evs, Event{Provider: provider, ID: id, Type: typ, Raw: body})
	}
	switch kind {
	case 0: // a Shopify order: created (paid or not yet), updated, paid
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
		add(shopify.Name, id(1), "orders/create", body(created))
		add(shopify.Name, id(2), "orders/updated", body("paid"))
		add(shopify.Name, fmt.Sprintf("order-%d-paid", order), "orders/paid", body("paid")) // keyed by the order
	case 1: // an Adyen payment, sometimes refunded
		psp := fmt.Sprintf("CHAOSPSP%08d", c)
		item := verifytest.AdyenItem{PspReference: psp, MerchantAccount: "HookinboxChaos", MerchantReference: fmt.Sprintf("order-chaos%05d", c),
			Value: int64(1000 + 100*rng.IntN(50)), Currency: "EUR", EventCode: "AUTHORISATION", Success: true, EventDate: at}
		key := LocalSecrets[adyen.Name][0] // re-signed with the target's key on delivery
		add(adyen.Name, psp+"-AUTHORISATION", "AUTHORISATION", verifytest.AdyenNotification(key, item))
		if rng.IntN(2) == 0 {
			refund := item
			refund.PspReference, refund.OriginalReference, refund.EventCode = fmt.Sprintf("CHAOSRFD%08d", c), psp, "REFUND"
			refund.EventDate = at.Add(time.Hour)
			add(adyen.Name, refund.PspReference+"-REFUND", "REFUND", verifytest.AdyenNotification(key, refund))
		}
	case 3: // a GoPay payment as its API serves it when GoPay notifies
		id := 3_000_000_000 + int64(c)
		state := []string{"PAID", "PAID", "PAID", "PAID", "REFUNDED", "CANCELED"}[rng.IntN(6)]
		body, _ := json.Marshal(standin.GoPayPayment{ID: id, OrderNumber: fmt.Sprintf("order-chaos%05d", c), State: state,
			Amount: int64(10_000 + 100*rng.IntN(90)), Currency: "CZK"})
		add(gopay.Name, strconv.FormatInt(id, 10), gopay.Notification, body)
	default: // deliveries nobody handles: a GitHub issue, a Standard Webhooks invoice
		gh, _ := json.Marshal(map[string]any{"action": "opened", "issue": map[string]any{"number": c, "title": "Chaos issue"},
			"repository": map[string]any{"full_name": "hookinbox/chaos"}})
		add(github.Name, fmt.Sprintf("chaos-github-%05d", c), "issues", gh)
		std, _ := json.Marshal(map[string]any{"type": "invoice.paid", "timestamp": at.Format(time.RFC3339),
			"data": map[string]any{"id": fmt.Sprintf("inv_chaos%05d", c), "amount": 4900, "currency": "EUR"}})
		add(standard.Name, fmt.Sprintf("msg_chaos%05d", c), "invoice.paid", std)
	}
	rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
	lines := make([][]byte, len(evs))
	for i, ev := range evs {
		lines[i] = deliveryLine(ev)
	}
	return lines
}

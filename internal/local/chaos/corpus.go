package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
)

// Generate returns a realistic corpus of n Stripe events, one JSON line
// each, as `hookinbox chaos --generate` writes it: customers buying once
// (some refunded later), subscribing (created, past_due, active again,
// some cancelled) with the subscription events out of order in the file,
// paying a checkout late (completed unpaid, then
// async_payment_succeeded), and events the shop has no handler for
// (customer.created, payment_intent.succeeded, invoice.paid,
// charge.refunded). The same n, seed and start give the same bytes.
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
		var evs [][]byte
		switch kind := rng.IntN(10); {
		case kind < 3: // a one-time purchase, sometimes refunded
			evs = append(evs, ev("customer.created"), ev("payment_intent.succeeded"), ev("checkout.session.completed"))
			if rng.IntN(3) == 0 {
				evs = append(evs, ev("charge.refunded"))
			}
		case kind < 7: // a subscription and its changes, out of order
			sub := fmt.Sprintf("sub_chaos%05d", c)
			evs = append(evs,
				ev("checkout.session.completed", verifytest.WithSubscription(sub, "")),
				ev("customer.subscription.created", verifytest.WithSubscription(sub, "active")),
				ev("invoice.paid"),
				ev("customer.subscription.updated", verifytest.WithSubscription(sub, "past_due")),
				ev("customer.subscription.updated", verifytest.WithSubscription(sub, "active")),
			)
			if rng.IntN(2) == 0 {
				evs = append(evs, ev("customer.subscription.deleted", verifytest.WithSubscription(sub, "canceled")))
			}
			rng.Shuffle(len(evs), func(i, j int) { evs[i], evs[j] = evs[j], evs[i] })
		case kind < 9: // a delayed payment method: completed unpaid, paid later
			evs = append(evs,
				ev("checkout.session.completed", verifytest.WithPaymentStatus("unpaid")),
				ev("checkout.session.async_payment_succeeded"),
			)
		default: // events nobody handles
			evs = append(evs, ev("customer.created"), ev("customer.updated"), ev("invoice.paid"))
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

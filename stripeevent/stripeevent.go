// Package stripeevent gives business code the stripe-go view of a Stripe
// event that hookinbox has verified, so a handler works with
// stripe.CheckoutSession, stripe.Subscription and the rest instead of raw
// JSON.
//
// It never checks the event's API version against stripe-go's (as
// stripe-go's webhook.ConstructEvent does by default): the signature was
// verified by the receiver, and an account pinned to another API version
// must not make every event fail. Fields stripe-go does not know are
// ignored; fields a newer API version renamed read as zero, so pin your
// webhook endpoint's API version as Stripe advises. It is part of
// hookinbox's public API; the functions are safe for concurrent use.
package stripeevent

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/stripe/stripe-go/v76"

	"github.com/hookinbox/hookinbox/webhook"
)

// errNotStripe: the event did not come from the stripe provider.
var errNotStripe = errors.New("not a Stripe event")

// Parse returns the stripe-go Event of ev. A malformed event is a
// permanent error (no retry can fix it).
func Parse(ev webhook.Event) (stripe.Event, error) {
	var se stripe.Event
	if ev.Provider != "stripe" {
		return se, webhook.Permanent(fmt.Errorf("%s: %w", ev.Key(), errNotStripe))
	}
	if err := json.Unmarshal(ev.Raw, &se); err != nil {
		return se, webhook.Permanent(fmt.Errorf("%s: parse Stripe event: %w", ev.Key(), err))
	}
	if se.Data == nil || len(se.Data.Raw) == 0 {
		return se, webhook.Permanent(fmt.Errorf("%s: Stripe event has no data.object", ev.Key()))
	}
	return se, nil
}

// Object returns the event's data.object decoded as T, for example
// stripeevent.Object[stripe.CheckoutSession](ev). A malformed event is a
// permanent error, so call it only once the event's type is one you
// handle (processorfn.Mux dispatches before any handler runs): an object
// of another type that does not decode as T would park an event that
// should have been IGNORED.
func Object[T any](ev webhook.Event) (T, error) {
	var obj T
	se, err := Parse(ev)
	if err != nil {
		return obj, err
	}
	if err := json.Unmarshal(se.Data.Raw, &obj); err != nil {
		return obj, webhook.Permanent(fmt.Errorf("%s: decode data.object as %T: %w", ev.Key(), obj, err))
	}
	return obj, nil
}

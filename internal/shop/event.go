package shop

import (
	"encoding/json"
	"fmt"

	"github.com/hookinbox/hookinbox/webhook"
)

// The parts of Stripe objects the shop reads. The structs are tolerant on
// purpose: they decode only the fields the shop needs, so a field that
// changes shape in another API version cannot break them.

type stripeEnvelope struct {
	Data struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
}

type checkoutSession struct {
	ID              string     `json:"id"`
	Object          string     `json:"object"`
	Customer        expandable `json:"customer"`
	CustomerDetails *struct {
		Email string `json:"email"`
	} `json:"customer_details"`
	CustomerEmail string     `json:"customer_email"`
	PaymentStatus string     `json:"payment_status"`
	Mode          string     `json:"mode"`         // "payment", "subscription" or "setup"
	Subscription  expandable `json:"subscription"` // mode "subscription" only
}

type subscription struct {
	ID       string     `json:"id"`
	Object   string     `json:"object"`
	Customer expandable `json:"customer"`
	Status   string     `json:"status"`
}

// expandable is a Stripe reference that is either an ID or, when expanded,
// an object with an id.
type expandable string

func (e *expandable) UnmarshalJSON(b []byte) error {
	var id string
	if err := json.Unmarshal(b, &id); err == nil {
		*e = expandable(id)
		return nil
	}
	var obj struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return fmt.Errorf("neither an ID nor an object with an id: %s", b)
	}
	*e = expandable(obj.ID)
	return nil
}

// parseObject decodes the event's data.object into v and checks that it is
// of the Stripe object type want and has an id. Any failure is permanent:
// no retry makes a payload parse.
func parseObject(ev webhook.Event, want string, v interface{ object() (typ, id string) }) error {
	var env stripeEnvelope
	if err := json.Unmarshal(ev.Raw, &env); err != nil {
		return webhook.Permanent(fmt.Errorf("%s %s: parse event: %w", ev.Type, ev.Key(), err))
	}
	if len(env.Data.Object) == 0 || string(env.Data.Object) == "null" {
		return webhook.Permanent(fmt.Errorf("%s %s: no data.object", ev.Type, ev.Key()))
	}
	if err := json.Unmarshal(env.Data.Object, v); err != nil {
		return webhook.Permanent(fmt.Errorf("%s %s: parse data.object: %w", ev.Type, ev.Key(), err))
	}
	switch got, id := v.object(); {
	case got != want:
		return webhook.Permanent(fmt.Errorf("%s %s: data.object is a %q, want %q", ev.Type, ev.Key(), got, want))
	case id == "":
		return webhook.Permanent(fmt.Errorf("%s %s: %s has no id", ev.Type, ev.Key(), want))
	}
	return nil
}

func (s *checkoutSession) object() (typ, id string) { return s.Object, s.ID }
func (s *subscription) object() (typ, id string)    { return s.Object, s.ID }

// email returns the address the customer gave at checkout.
func (s *checkoutSession) email() string {
	if s.CustomerDetails != nil && s.CustomerDetails.Email != "" {
		return s.CustomerDetails.Email
	}
	return s.CustomerEmail
}

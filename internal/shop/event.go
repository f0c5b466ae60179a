package shop

import (
	"encoding/json"
	"fmt"

	"github.com/hookinbox/hookinbox/webhook"
)

// The parts of Stripe events and objects the shop reads (each object's
// struct lives with the code that handles it: checkout.go,
// subscription.go). The structs are tolerant on purpose: they decode only
// the fields the shop needs, so a field that changes shape in another API
// version cannot break them.

type stripeEnvelope struct {
	Data struct {
		Object json.RawMessage `json:"object"`
	} `json:"data"`
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

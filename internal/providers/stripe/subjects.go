package stripe

import (
	"encoding/json"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// subjects is Stripe's Webhook.Subjects: the customer the event's
// object belongs to (data.object.customer, or the object itself when it
// is a customer) and every email address in the event.
func subjects(ev webhook.Event) []provider.Subject {
	var e struct {
		Data struct {
			Object struct {
				ID       string          `json:"id"`
				Object   string          `json:"object"`
				Customer json.RawMessage `json:"customer"`
			} `json:"object"`
		} `json:"data"`
	}
	if json.Unmarshal(ev.Raw, &e) != nil {
		return nil
	}
	o := e.Data.Object
	customer := provider.JSONID(o.Customer)
	if customer == "" && len(o.Customer) > 0 {
		var expanded struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(o.Customer, &expanded)
		customer = expanded.ID
	}
	if o.Object == "customer" {
		customer = o.ID
	}
	return append([]provider.Subject{provider.CustomerSubject(Name, customer)}, provider.Emails(ev.Raw)...)
}

package shopify

import (
	"encoding/json"
	"strings"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Subjects implements provider.SubjectFinder: the customer (customer.id,
// or the object's id on a customers/ topic) and every email address in
// the event.
func (Provider) Subjects(ev webhook.Event) []provider.Subject {
	var o struct {
		ID       json.RawMessage `json:"id"`
		Customer struct {
			ID json.RawMessage `json:"id"`
		} `json:"customer"`
	}
	if json.Unmarshal(ev.Raw, &o) != nil {
		return nil
	}
	customer := provider.JSONID(o.Customer.ID)
	if strings.HasPrefix(ev.Type, "customers/") && ev.Type != "customers/data_request" && ev.Type != "customers/redact" {
		customer = provider.JSONID(o.ID)
	}
	return append([]provider.Subject{provider.CustomerSubject(Name, customer)}, provider.Emails(ev.Raw)...)
}

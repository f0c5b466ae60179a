package mollie

import (
	"encoding/json"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// subjects is Mollie's Webhook.Subjects: the customer (customerId)
// and every email address of the payment Mollie's API serves; a
// notification names no one.
func subjects(ev webhook.Event) []provider.Subject {
	var p struct {
		CustomerID string `json:"customerId"`
	}
	if json.Unmarshal(ev.Raw, &p) != nil {
		return nil
	}
	return append([]provider.Subject{provider.CustomerSubject(Name, p.CustomerID)}, provider.Emails(ev.Raw)...)
}

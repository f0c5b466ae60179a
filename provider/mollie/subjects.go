package mollie

import (
	"encoding/json"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Subjects implements provider.SubjectFinder: the customer (customerId)
// and every email address of the payment Mollie's API serves; a
// notification names no one.
func (Provider) Subjects(ev webhook.Event) []provider.Subject {
	var p struct {
		CustomerID string `json:"customerId"`
	}
	if json.Unmarshal(ev.Raw, &p) != nil {
		return nil
	}
	return append([]provider.Subject{provider.CustomerSubject(Name, p.CustomerID)}, provider.Emails(ev.Raw)...)
}

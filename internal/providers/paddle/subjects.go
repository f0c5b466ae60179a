package paddle

import (
	"encoding/json"
	"strings"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// subjects is Paddle's Webhook.Subjects: the customer (data.customer_id,
// or data.id of a customer entity, ctm_...) and every email address.
func subjects(ev webhook.Event) []provider.Subject {
	var e struct {
		Data struct {
			ID         string `json:"id"`
			CustomerID string `json:"customer_id"`
		} `json:"data"`
	}
	if json.Unmarshal(ev.Raw, &e) != nil {
		return nil
	}
	customer := e.Data.CustomerID
	if strings.HasPrefix(e.Data.ID, "ctm_") {
		customer = e.Data.ID
	}
	return append([]provider.Subject{provider.CustomerSubject(Name, customer)}, provider.Emails(ev.Raw)...)
}

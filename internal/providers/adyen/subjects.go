package adyen

import (
	"encoding/json"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// subjects is Adyen's Webhook.Subjects: the shopper reference of
// each notification item (additionalData.shopperReference) and every
// email address (additionalData.shopperEmail, ...).
func subjects(ev webhook.Event) []provider.Subject {
	var n struct {
		Items []struct {
			Item struct {
				AdditionalData struct {
					ShopperReference string `json:"shopperReference"`
				} `json:"additionalData"`
			} `json:"NotificationRequestItem"`
		} `json:"notificationItems"`
	}
	if json.Unmarshal(ev.Raw, &n) != nil {
		return nil
	}
	var out []provider.Subject
	for _, it := range n.Items {
		out = append(out, provider.CustomerSubject(Name, it.Item.AdditionalData.ShopperReference))
	}
	return append(out, provider.Emails(ev.Raw)...)
}

package shopify

import (
	"encoding/json"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Shopify's mandatory compliance topics, which every app subscribes to
// (compliance_topics in shopify.app.toml).
const (
	TopicDataRequest     = "customers/data_request"
	TopicCustomersRedact = "customers/redact"
	TopicShopRedact      = "shop/redact"
)

// PrivacyRequest implements provider.PrivacyRequester: customers/redact
// erases the customer it names, customers/data_request lists what is held
// about them, shop/redact erases every Shopify event.
func (p Provider) PrivacyRequest(ev webhook.Event) (provider.PrivacyRequest, bool) {
	switch ev.Type {
	case TopicDataRequest, TopicCustomersRedact:
		return provider.PrivacyRequest{Erase: ev.Type == TopicCustomersRedact, Subjects: provider.SubjectsOf(p, ev)}, true
	case TopicShopRedact:
		var shop struct {
			Domain string `json:"shop_domain"`
		}
		_ = json.Unmarshal(ev.Raw, &shop)
		return provider.PrivacyRequest{Erase: true, All: true, Subjects: []provider.Subject{provider.CustomerSubject(Name, "shop:"+shop.Domain)}}, true
	}
	return provider.PrivacyRequest{}, false
}

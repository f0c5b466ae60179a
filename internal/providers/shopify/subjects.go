package shopify

import (
	"encoding/json"
	"strings"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// subjects is Shopify's Webhook.Subjects: the customer (customer.id,
// or the object's id on a customers/ topic), every email address in the
// event, and the shop (ShopSubject), so that a shop/redact finds the
// shop's events. The shop is the one the signed body names
// (shop_domain, myshopify_domain) or else the one the unsigned
// X-Shopify-Shop-Domain header names (ev.Account): a body re-sent under
// another shop's header is a new event of that shop, which only that
// shop's erasure (or its customer's, or the retention) removes.
func subjects(ev webhook.Event) []provider.Subject {
	var o struct {
		ID       json.RawMessage `json:"id"`
		Customer struct {
			ID json.RawMessage `json:"id"`
		} `json:"customer"`
		ShopDomain      string `json:"shop_domain"`
		MyshopifyDomain string `json:"myshopify_domain"`
	}
	if json.Unmarshal(ev.Raw, &o) != nil {
		return nil
	}
	customer := provider.JSONID(o.Customer.ID)
	if strings.HasPrefix(ev.Type, "customers/") && ev.Type != TopicDataRequest && ev.Type != TopicCustomersRedact {
		customer = provider.JSONID(o.ID)
	}
	shop := ShopSubject(o.ShopDomain)
	if shop == "" {
		shop = ShopSubject(o.MyshopifyDomain)
	}
	if shop == "" {
		shop = ShopSubject(ev.Account)
	}
	return append([]provider.Subject{provider.CustomerSubject(Name, customer), shop}, provider.Emails(ev.Raw)...)
}

// ShopSubject returns the subject of the shop whose myshopify domain is
// domain ("shopify:shop:<domain>", in lower case), or "" when domain is
// not a domain.
func ShopSubject(domain string) provider.Subject {
	domain = strings.ToLower(strings.TrimSpace(domain))
	if !shopDomain.MatchString(domain) {
		return ""
	}
	return provider.CustomerSubject(Name, "shop:"+domain)
}

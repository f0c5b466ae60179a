package shopify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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

// compliance is the body of a compliance topic: each has shop_id and
// shop_domain; customers/redact a customer and orders_to_redact;
// customers/data_request a customer, orders_requested and data_request.
type compliance struct {
	ShopID          json.RawMessage  `json:"shop_id"`
	ShopDomain      string           `json:"shop_domain"`
	Customer        *json.RawMessage `json:"customer"`
	OrdersToRedact  *json.RawMessage `json:"orders_to_redact"`
	OrdersRequested *json.RawMessage `json:"orders_requested"`
	DataRequest     *json.RawMessage `json:"data_request"`
}

// customer is a compliance body's customer.
type customer struct {
	ID    json.RawMessage `json:"id"`
	Email string          `json:"email"`
}

// shapes are the members each compliance topic's body needs beside the
// shop, and those only another topic's has.
var shapes = map[string]struct{ need, refuse []string }{
	TopicShopRedact:      {nil, []string{"customer", "orders_to_redact", "orders_requested", "data_request"}},
	TopicCustomersRedact: {[]string{"customer", "orders_to_redact"}, []string{"orders_requested", "data_request"}},
	TopicDataRequest:     {[]string{"customer", "data_request"}, []string{"orders_to_redact"}},
}

// errShape: a compliance topic's body is not of the topic's shape.
var errShape = errors.New("body is not of its compliance topic's shape")

// complianceBody reads body as the compliance topic's: an error, wrapping
// errShape, names what is missing or out of place. Every topic's body
// names the shop (shop_id, shop_domain), and has what its topic needs
// and no member only another topic's body has (shapes), so a body
// signed for one topic (or for an order) re-sent under another is
// refused.
func complianceBody(topic string, body []byte) (compliance, customer, error) {
	var c compliance
	var cust customer
	if err := strictJSON(body, &c); err != nil {
		return c, cust, fmt.Errorf("%s: %w: %v", topic, errShape, err)
	}
	var problems []string
	if provider.JSONID(c.ShopID) == "" {
		problems = append(problems, "no shop_id")
	}
	if !shopDomain.MatchString(c.ShopDomain) {
		problems = append(problems, "no shop_domain")
	}
	has := map[string]bool{"customer": c.Customer != nil, "orders_to_redact": c.OrdersToRedact != nil,
		"orders_requested": c.OrdersRequested != nil, "data_request": c.DataRequest != nil}
	shape := shapes[topic]
	for _, name := range shape.need {
		if !has[name] {
			problems = append(problems, "no "+name)
		}
	}
	for _, name := range shape.refuse {
		if has[name] {
			problems = append(problems, "a "+name+" (another topic's)")
		}
	}
	if c.Customer != nil {
		if err := json.Unmarshal(*c.Customer, &cust); err != nil || (provider.JSONID(cust.ID) == "" && provider.EmailSubject(cust.Email) == "") {
			problems = append(problems, "a customer without id or email")
		}
	}
	if len(problems) > 0 {
		return c, cust, fmt.Errorf("%s: %w: %s", topic, errShape, strings.Join(problems, ", "))
	}
	return c, cust, nil
}

// strictJSON decodes a JSON object into v, refusing trailing data.
func strictJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the object")
	}
	return nil
}

// isCompliance reports whether topic is a compliance topic.
func isCompliance(topic string) bool {
	_, ok := shapes[topic]
	return ok
}

// privacyRequest is Shopify's Webhook.PrivacyRequest, from the signed
// body alone: customers/redact erases the customer it names (by id and
// email), customers/data_request lists what is held about them, and
// shop/redact erases the events of the shop it names (shop_domain). Each
// touches only the Shopify events of the shop its body names
// (PrivacyRequest.Account): a public app's one secret serves every shop.
// A body not of its topic's shape is refused (complianceBody).
func privacyRequest(ev webhook.Event) (provider.PrivacyRequest, bool, error) {
	if !isCompliance(ev.Type) {
		return provider.PrivacyRequest{}, false, nil
	}
	c, cust, err := complianceBody(ev.Type, ev.Raw)
	if err != nil {
		return provider.PrivacyRequest{}, true, err
	}
	shop := ShopSubject(c.ShopDomain)
	if ev.Type == TopicShopRedact {
		return provider.PrivacyRequest{Erase: true, Subjects: []provider.Subject{shop}, Account: shop}, true, nil
	}
	req := provider.PrivacyRequest{Erase: ev.Type == TopicCustomersRedact, Account: shop}
	for _, s := range []provider.Subject{provider.CustomerSubject(Name, provider.JSONID(cust.ID)), provider.EmailSubject(cust.Email)} {
		if s != "" {
			req.Subjects = append(req.Subjects, s)
		}
	}
	if ev.Type == TopicDataRequest {
		var dr struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(*c.DataRequest, &dr)
		req.Reference = "data request " + provider.JSONID(dr.ID)
	}
	return req, true, nil
}

package shopify_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// The compliance bodies as Shopify documents them, and an order's.
const (
	orderBody       = `{"id":820982911946154508,"email":"jon@example.com","customer":{"id":115310627314723954,"email":"jon@example.com"},"line_items":[]}`
	shopRedactBody  = `{"shop_id":954889,"shop_domain":"Gone-Shop.myshopify.com"}`
	redactBody      = `{"shop_id":954889,"shop_domain":"gone-shop.myshopify.com","customer":{"id":191167,"email":"john@example.com","phone":"555-625-1199"},"orders_to_redact":[299938,280263]}`
	dataRequestBody = `{"shop_id":954889,"shop_domain":"gone-shop.myshopify.com","orders_requested":[299938],"customer":{"id":191167,"email":"john@example.com","phone":"555-625-1199"},"data_request":{"id":9999}}`
)

// TestComplianceTopicsNeedTheirOwnBody: the topic header is not signed,
// so a compliance topic is verified only with a body of its own shape; a
// signed body of another topic (an order, another compliance topic) re-sent
// under it is refused with 400 (ErrNotEvent) and asks nothing. A good one
// asks for what its signed body names: shop/redact for the shop of its
// shop_domain, whatever the unsigned X-Shopify-Shop-Domain says.
func TestComplianceTopicsNeedTheirOwnBody(t *testing.T) {
	bodies := map[string]string{"order": orderBody, shopify.TopicShopRedact: shopRedactBody,
		shopify.TopicCustomersRedact: redactBody, shopify.TopicDataRequest: dataRequestBody,
		"no shop": `{"customer":{"id":1},"orders_to_redact":[]}`, "customer without id or email": `{"shop_id":1,"shop_domain":"a.myshopify.com","customer":{"phone":"1"},"orders_to_redact":[]}`}
	// Each touches only the shop its body names, whatever the header.
	const shop = provider.Subject("shopify:shop:gone-shop.myshopify.com")
	want := map[string]provider.PrivacyRequest{
		shopify.TopicShopRedact:      {Erase: true, Subjects: []provider.Subject{shop}, Account: shop},
		shopify.TopicCustomersRedact: {Erase: true, Subjects: []provider.Subject{"shopify:191167", "email:john@example.com"}, Account: shop},
		shopify.TopicDataRequest:     {Subjects: []provider.Subject{"shopify:191167", "email:john@example.com"}, Account: shop, Reference: "data request 9999"},
	}
	v := &shopify.Verifier{Secrets: []string{"hush-hush-hush-hush-hush-hush-hush"}}
	for _, topic := range []string{shopify.TopicShopRedact, shopify.TopicCustomersRedact, shopify.TopicDataRequest} {
		for name, body := range bodies {
			t.Run(topic+" with "+name, func(t *testing.T) {
				h := shopify.Headers([]byte(body), v.Secrets[0], "evt-1", topic, time.Now())
				h["x-shopify-shop-domain"] = "other-shop.myshopify.com"
				evs, err := v.Verify(context.Background(), webhook.Request{Header: h, Body: []byte(body)})
				if name != topic {
					if !errors.Is(err, provider.ErrNotEvent) {
						t.Errorf("Verify = %v, %v; want ErrNotEvent", evs, err)
					}
					ev := webhook.Event{Provider: shopify.Name, ID: "1", Type: topic, Raw: []byte(body)}
					if req, ok, err := (shopify.Provider{}).Webhook().PrivacyRequest(ev); !ok || err == nil {
						t.Errorf("PrivacyRequest = %+v, %v, %v; want it refused", req, ok, err)
					}
					return
				}
				if err != nil || len(evs) != 1 || evs[0].Account != "other-shop.myshopify.com" {
					t.Fatalf("Verify = %+v, %v; want the event, its account from the header", evs, err)
				}
				req, ok, err := (shopify.Provider{}).Webhook().PrivacyRequest(evs[0])
				if !ok || err != nil {
					t.Fatalf("PrivacyRequest: ok %v, %v", ok, err)
				}
				if diff := cmp.Diff(want[topic], req); diff != "" {
					t.Errorf("PrivacyRequest (-want +got):\n%s", diff)
				}
			})
		}
	}
	if _, ok, err := (shopify.Provider{}).Webhook().PrivacyRequest(webhook.Event{Provider: shopify.Name, ID: "1", Type: "orders/paid", Raw: []byte(orderBody)}); ok || err != nil {
		t.Errorf("PrivacyRequest of an order: ok %v, %v; want no request", ok, err)
	}
}

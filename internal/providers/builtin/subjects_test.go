package builtin_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestSubjects: each provider names the people its events are about, by
// customer id and email, each once.
func TestSubjects(t *testing.T) {
	tests := []struct {
		provider, typ, raw string
		want               []provider.Subject
	}{
		{"stripe", "checkout.session.completed", `{"data":{"object":{"object":"checkout.session","customer":"cus_1","customer_details":{"email":"Jenny@Example.com"},"customer_email":"jenny@example.com"}}}`,
			[]provider.Subject{"stripe:cus_1", "email:jenny@example.com"}},
		{"stripe", "customer.created", `{"data":{"object":{"object":"customer","id":"cus_2","email":"a@b.example"}}}`,
			[]provider.Subject{"stripe:cus_2", "email:a@b.example"}},
		{"stripe", "invoice.paid", `{"data":{"object":{"customer":{"id":"cus_3"}}}}`, []provider.Subject{"stripe:cus_3"}},
		{"shopify", "orders/paid", `{"id":820982911946154508,"email":"john@example.com","customer":{"id":115310627314723954,"email":"john@example.com"}}`,
			[]provider.Subject{"shopify:115310627314723954", "shopify:shop:shop-a.myshopify.com", "email:john@example.com"}},
		{"shopify", "customers/update", `{"id":207119551,"email":"bob@example.com"}`, []provider.Subject{"shopify:207119551", "shopify:shop:shop-a.myshopify.com", "email:bob@example.com"}},
		{"shopify", "customers/redact", `{"shop_id":954889,"shop_domain":"s.myshopify.com","customer":{"id":191167,"email":"john@example.com","phone":"555-625-1199"},"orders_to_redact":[299938]}`,
			[]provider.Subject{"shopify:191167", "shopify:shop:s.myshopify.com", "email:john@example.com"}},
		// The shop the body names, or else the one the delivery's
		// X-Shopify-Shop-Domain names (Account).
		{"shopify", "app/uninstalled", `{"id":1,"myshopify_domain":"Shop-B.myshopify.com","email":"owner@example.com"}`,
			[]provider.Subject{"shopify:shop:shop-b.myshopify.com", "email:owner@example.com"}},
		{"adyen", "AUTHORISATION", `{"notificationItems":[{"NotificationRequestItem":{"additionalData":{"shopperReference":"shopper-9","shopperEmail":"s@example.com"}}}]}`,
			[]provider.Subject{"adyen:shopper-9", "email:s@example.com"}},
		{"gopay", "notification", `{"id":3000006529,"payer":{"contact":{"email":"payer@example.com"}}}`, []provider.Subject{"email:payer@example.com"}},
		{"paddle", "transaction.completed", `{"data":{"id":"txn_1","customer_id":"ctm_1"}}`, []provider.Subject{"paddle:ctm_1"}},
		{"paddle", "customer.created", `{"data":{"id":"ctm_2","email":"p@example.com"}}`, []provider.Subject{"paddle:ctm_2", "email:p@example.com"}},
		{"mollie", "payment.paid", `{"id":"tr_1","customerId":"cst_1","billingAddress":{"email":"m@example.com"}}`, []provider.Subject{"mollie:cst_1", "email:m@example.com"}},
		{"github", "issues", `{"sender":{"login":"octocat"},"issue":{"user":{"login":"octocat"}}}`, []provider.Subject{"github:octocat"}},
		{"standard", "invoice.paid", `{"email":"x@example.com"}`, nil},
		{"stripe", "charge.refunded", `not json`, nil},
	}
	reg, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.provider+" "+tt.typ, func(t *testing.T) {
			p, _ := reg.Lookup(tt.provider)
			got := privacy.SubjectsOf(p, webhook.Event{Provider: tt.provider, ID: "e1", Type: tt.typ, Raw: []byte(tt.raw), Account: "shop-a.myshopify.com"})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("subjects (-want +got):\n%s", diff)
			}
		})
	}
}

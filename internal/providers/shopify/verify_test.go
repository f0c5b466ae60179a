package shopify_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"

	"github.com/hookinbox/hookinbox/internal/verify/verifyfuzz"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestShopifyDocumentedScheme checks Shopify's documented scheme (the
// base64 HMAC-SHA256 of the raw body under the client secret) against a
// value computed outside Go:
//
//	printf '%s' '{"id":820982911946154508,"topic":"orders/paid"}' | openssl dgst -sha256 -hmac hush -binary | base64
func TestShopifyDocumentedScheme(t *testing.T) {
	body := []byte(`{"id":820982911946154508,"topic":"orders/paid"}`)
	s := &shopify.Verifier{Secrets: []string{"hush"}}
	evs, err := s.Verify(context.Background(), webhook.Request{Header: map[string]string{
		"x-shopify-hmac-sha256":  "0gSap1dSbvBM4ZmhxyOu3bwLiFes4r2DJ6EdVfiv5JY=",
		"x-shopify-topic":        "orders/paid",
		"x-shopify-event-id":     "98880550-7158-44d4-b7cd-2c97c8a091b5",
		"x-shopify-triggered-at": "2025-01-02T03:04:05.123456Z",
	}, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	want := webhook.Event{Provider: "shopify", ID: "98880550-7158-44d4-b7cd-2c97c8a091b5", Type: "orders/paid",
		Created: time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC), Raw: body}
	if len(evs) != 1 || evs[0].Key() != want.Key() || evs[0].Type != want.Type || !evs[0].Created.Equal(want.Created) {
		t.Fatalf("Verify = %+v, want %+v", evs, want)
	}
}

func TestShopifyVerify(t *testing.T) {
	body := []byte(`{"id":820982911946154508,"line_items":[]}`)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &shopify.Verifier{Secrets: []string{"old", "new"}}
	ctx := context.Background()
	h := func(mut func(map[string]string)) webhook.Request {
		hd := shopify.Headers(body, "new", "evt-1", "orders/paid", at)
		mut(hd)
		return webhook.Request{Header: hd, Body: body}
	}
	evs, err := s.Verify(ctx, h(func(map[string]string) {}))
	if err != nil || evs[0].Key() != "shopify#evt-1" {
		t.Fatalf("Verify = %+v, %v", evs, err)
	}
	evs, err = s.Verify(ctx, h(func(m map[string]string) { delete(m, "x-shopify-event-id") }))
	if err != nil || evs[0].Key() != "shopify#wh-evt-1" {
		t.Fatalf("fallback to X-Shopify-Webhook-Id: %+v, %v", evs, err)
	}
	tests := []struct {
		name string
		req  webhook.Request
		want error
	}{
		{"forged", webhook.Request{Header: shopify.Headers(body, "attacker", "evt-1", "orders/paid", at), Body: body}, provider.ErrBadSignature},
		{"no signature", h(func(m map[string]string) { delete(m, "x-shopify-hmac-sha256") }), provider.ErrNoSignature},
		{"not base64", h(func(m map[string]string) { m["x-shopify-hmac-sha256"] = "%%%" }), provider.ErrBadSignature},
		{"missing id headers", h(func(m map[string]string) { delete(m, "x-shopify-event-id"); delete(m, "x-shopify-webhook-id") }), provider.ErrNoEventID},
		{"bad id", h(func(m map[string]string) { m["x-shopify-event-id"] = strings.Repeat("a", 300) }), provider.ErrBadEventID},
		{"no topic", h(func(m map[string]string) { delete(m, "x-shopify-topic") }), provider.ErrNotEvent},
		{"malformed body", webhook.Request{Header: shopify.Headers([]byte("[1]"), "new", "evt-1", "orders/paid", at), Body: []byte("[1]")}, provider.ErrNotJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Verify(ctx, tc.req); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestShopifyUnprefixedHeaders: Shopify's newer deliveries name the
// headers without X- (Shopify-Hmac-Sha256, Shopify-Topic, Shopify-Event-Id,
// Shopify-Triggered-At, ...), as Shopify's own API libraries accept; they
// verify and give the same event as the X-Shopify- ones.
func TestShopifyUnprefixedHeaders(t *testing.T) {
	body := []byte(`{"id":820982911946154508,"topic":"orders/paid"}`)
	s := &shopify.Verifier{Secrets: []string{"hush"}}
	ctx := context.Background()
	// TestShopifyDocumentedScheme's delivery, unprefixed.
	evs, err := s.Verify(ctx, webhook.Request{Header: map[string]string{
		"shopify-hmac-sha256":  "0gSap1dSbvBM4ZmhxyOu3bwLiFes4r2DJ6EdVfiv5JY=",
		"shopify-topic":        "orders/paid",
		"shopify-event-id":     "98880550-7158-44d4-b7cd-2c97c8a091b5",
		"shopify-triggered-at": "2025-01-02T03:04:05.123456Z",
		"shopify-shop-domain":  "hookinbox-demo.myshopify.com",
		"shopify-api-version":  "2025-01",
	}, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Key() != "shopify#98880550-7158-44d4-b7cd-2c97c8a091b5" || evs[0].Type != "orders/paid" ||
		!evs[0].Created.Equal(time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC)) || string(evs[0].Raw) != string(body) {
		t.Fatalf("Verify = %+v", evs)
	}

	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := func(mut func(map[string]string)) webhook.Request {
		hd := shopify.Unprefixed(shopify.Headers(body, "hush", "evt-1", "orders/paid", at))
		mut(hd)
		return webhook.Request{Header: hd, Body: body}
	}
	evs, err = s.Verify(ctx, h(func(m map[string]string) { delete(m, "shopify-event-id") }))
	if err != nil || evs[0].Key() != "shopify#wh-evt-1" {
		t.Fatalf("fallback to Shopify-Webhook-Id: %+v, %v", evs, err)
	}
	tests := []struct {
		name string
		req  webhook.Request
		want error
	}{
		{"forged", webhook.Request{Header: shopify.Unprefixed(shopify.Headers(body, "attacker", "evt-1", "orders/paid", at)), Body: body}, provider.ErrBadSignature},
		{"no signature", h(func(m map[string]string) { delete(m, "shopify-hmac-sha256") }), provider.ErrNoSignature},
		{"missing id headers", h(func(m map[string]string) { delete(m, "shopify-event-id"); delete(m, "shopify-webhook-id") }), provider.ErrNoEventID},
		{"no topic", h(func(m map[string]string) { delete(m, "shopify-topic") }), provider.ErrNotEvent},
		// A forged X-Shopify- signature is not rescued by a genuine
		// unprefixed one: the X- one is read when present.
		{"forged X- beside a genuine unprefixed", h(func(m map[string]string) { m["x-shopify-hmac-sha256"] = strings.Repeat("A", 43) + "=" }), provider.ErrBadSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Verify(ctx, tc.req); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzShopifyVerify holds shopify.Verifier to verifyfuzz.VerifierFuzz's
// property (see FuzzGitHubVerify).
func FuzzShopifyVerify(f *testing.F) {
	const secret = "hush"
	s := &shopify.Verifier{Secrets: []string{secret}}
	fz := verifyfuzz.FromRequestVerifier("shopify", s.Verify,
		func(b []byte) map[string]string {
			return shopify.Headers(b, secret, verifyfuzz.DeliveryID(b), "orders/paid", time.Unix(0, 0))
		},
		func(h map[string]string, b []byte) bool { return verifyfuzz.ShopifyGenuine(h, b, secret) })
	fz.Seed(f, []byte(`{"id":820982911946154508,"topic":"orders/paid"}`), []byte(`{"id":1}`), nil)
	// A signature one base64 digit off, and the webhook id standing in
	// for a missing event id.
	f.Add("x-shopify-hmac-sha256: 0gSap1dSbvBM4ZmhxyOu3bwLiFes4r2DJ6EdVfiv5JZ=\nx-shopify-event-id: e-1\nx-shopify-topic: orders/paid",
		[]byte(`{"id":820982911946154508,"topic":"orders/paid"}`), verifyfuzz.AsGiven, uint16(0))
	f.Add("x-shopify-event-id: \nx-shopify-webhook-id: wh-1", []byte(`{"id":1}`), verifyfuzz.Signed, uint16(0))
	// The unprefixed spelling, alone and beside a forged X- signature.
	unprefixed := []byte(`{"id":820982911946154508,"topic":"orders/paid"}`)
	f.Add(verifyfuzz.HeaderLines(shopify.Unprefixed(shopify.Headers(unprefixed, secret, "e-2", "orders/paid", time.Unix(0, 0)))),
		unprefixed, verifyfuzz.AsGiven, uint16(0))
	f.Add("x-shopify-hmac-sha256: \nshopify-hmac-sha256: 0gSap1dSbvBM4ZmhxyOu3bwLiFes4r2DJ6EdVfiv5JY=", unprefixed, verifyfuzz.Signed, uint16(0))
	f.Fuzz(fz.Check)
}

// TestShopifyPaidOrderIsKeyedByTheOrder: orders/paid of a body that says
// the order is paid is keyed by the order, as the reconciler claims it,
// whatever its event id; any other topic, an order not paid, or an id
// that is not a positive integer keeps the event id. The sample of a
// paid order's orders/paid names that key.
func TestShopifyPaidOrderIsKeyedByTheOrder(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := &shopify.Verifier{Secrets: []string{"hush"}}
	for _, tc := range []struct {
		name, topic, body, want string
	}{
		{"paid", "orders/paid", `{"id":820982911946154508,"financial_status":"paid"}`, "shopify#order-820982911946154508-paid"},
		{"another topic", "orders/updated", `{"id":820982911946154508,"financial_status":"paid"}`, "shopify#evt-1"},
		{"not paid", "orders/paid", `{"id":820982911946154508,"financial_status":"pending"}`, "shopify#evt-1"},
		{"no status", "orders/paid", `{"id":820982911946154508}`, "shopify#evt-1"},
		{"id zero", "orders/paid", `{"id":0,"financial_status":"paid"}`, "shopify#evt-1"},
		{"id negative", "orders/paid", `{"id":-5,"financial_status":"paid"}`, "shopify#evt-1"},
		{"id a fraction", "orders/paid", `{"id":5.5,"financial_status":"paid"}`, "shopify#evt-1"},
		{"id too large", "orders/paid", `{"id":18446744073709551616,"financial_status":"paid"}`, "shopify#evt-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			for _, h := range []map[string]string{shopify.Headers(body, "hush", "evt-1", tc.topic, at), shopify.Unprefixed(shopify.Headers(body, "hush", "evt-1", tc.topic, at))} {
				evs, err := s.Verify(context.Background(), webhook.Request{Header: h, Body: body})
				if err != nil || len(evs) != 1 || evs[0].Key() != webhook.Key(tc.want) || evs[0].Type != tc.topic {
					t.Errorf("Verify = %+v, %v; want one %s event %s", evs, err, tc.topic, tc.want)
				}
			}
		})
	}
	ev, err := shopify.Sender().Sample(sample.Event{File: "orders_paid.json", Fresh: true,
		Body: []byte(`{"id":820982911946154508,"financial_status":"paid"}`)})
	if err != nil || !strings.HasPrefix(ev.ID, "order-") || ev.ID == "order-820982911946154508-paid" {
		t.Errorf("Sample = id %q, %v; want the fresh order's key", ev.ID, err)
	}
}

package shop

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hookinbox/hookinbox/webhook"
)

// TestUnhandledTypesAreIgnoredWhateverTheirBody: for every provider, an
// event of a type the shop has no handler for is ErrNoHandler (IGNORED),
// never permanent, whatever its body holds beyond what the verifier
// needed (strings for numbers, missing or null fields, no JSON at all), and
// it writes nothing.
func TestUnhandledTypesAreIgnoredWhateverTheirBody(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		ev   webhook.Event
	}{
		// Adyen's REPORT_AVAILABLE as its own examples send it: the amount
		// a string ("value":"0"), no payment at all.
		{"adyen REPORT_AVAILABLE", webhook.Event{Provider: "adyen", ID: "8516178952380553-REPORT_AVAILABLE", Type: "REPORT_AVAILABLE", Created: at,
			Raw: []byte(`{"amount":{"currency":"EUR","value":"0"},"eventCode":"REPORT_AVAILABLE","merchantAccountCode":"HookinboxECOM",` +
				`"merchantReference":"testMerchantRef1","pspReference":"8516178952380553","reason":"https://example.com/report.csv","success":"true"}`)}},
		{"adyen CAPTURE with a fractional amount", webhook.Event{Provider: "adyen", ID: "8816178952380553-CAPTURE", Type: "CAPTURE", Created: at,
			Raw: []byte(`{"amount":{"value":12.5},"eventCode":"CAPTURE","success":"true"}`)}},
		{"adyen CANCELLATION with no amount or reference", webhook.Event{Provider: "adyen", ID: "8816178952380553-CANCELLATION", Type: "CANCELLATION",
			Raw: []byte(`{"eventCode":"CANCELLATION","success":true,"amount":"none"}`)}},
		{"gopay CREATED with a string amount", webhook.Event{Provider: "gopay", ID: "3000006529", Type: "notification",
			Raw: []byte(`{"id":3000006529,"state":"CREATED","amount":"1000","currency":7,"order_number":{"n":1}}`)}},
		{"gopay CANCELED with nothing else", webhook.Event{Provider: "gopay", ID: "3000006530", Type: "notification",
			Raw: []byte(`{"id":3000006530,"state":"CANCELED"}`)}},
		{"stripe invoice.paid with odd fields", webhook.Event{Provider: "stripe", ID: "evt_1Odd000000000000000001", Type: "invoice.paid", Created: at,
			Raw: []byte(`{"id":"evt_1Odd000000000000000001","type":"invoice.paid","created":"yesterday","data":{"object":{"object":7,"amount_paid":"a lot"}}}`)}},
		{"stripe charge.refunded with no data", webhook.Event{Provider: "stripe", ID: "evt_1Odd000000000000000002", Type: "charge.refunded",
			Raw: []byte(`{"id":"evt_1Odd000000000000000002"}`)}},
		{"shopify products/update", webhook.Event{Provider: "shopify", ID: "e0a1f6b2-0101", Type: "products/update",
			Raw: []byte(`{"id":"not a number","variants":null,"financial_status":"paid","line_items":[{"quantity":"2"}]}`)}},
		{"shopify orders/cancelled", webhook.Event{Provider: "shopify", ID: "e0a1f6b2-0102", Type: "orders/cancelled",
			Raw: []byte(`{"id":820982911946154508,"financial_status":"paid","line_items":[{"sku":"MUG-BLUE","quantity":-5}],"total_price":12}`)}},
		{"github push", webhook.Event{Provider: "github", ID: "72d3162e-cc78-11e3-81ab-4c9367dc0958", Type: "push",
			Raw: []byte(`{"after":12,"commits":"many","repository":null}`)}},
		{"github made-up event", webhook.Event{Provider: "github", ID: "72d3162e-cc78-11e3-81ab-4c9367dc0959", Type: "orders/paid",
			Raw: []byte(`{}`)}},
		{"standard contact.created", webhook.Event{Provider: "standard", ID: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", Type: "contact.created", Created: at,
			Raw: []byte(`{"type":"contact.created","timestamp":17,"data":"nope"}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHarness(t)
			err := h.shop.Handle(context.Background(), tt.ev, h.ledger.For(tt.ev.Key()))
			if !errors.Is(err, webhook.ErrNoHandler) || webhook.IsPermanent(err) {
				t.Errorf("Handle = %v, want ErrNoHandler (IGNORED), not permanent", err)
			}
			if diff := cmp.Diff(State{}, state(t, h), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("an ignored event wrote records (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAdyenAmountAsAString: Adyen sends amount.value as a number or as a
// string holding one; a handled AUTHORISATION is recorded either way, and
// only an amount that is no whole number of minor units is permanent.
func TestAdyenAmountAsAString(t *testing.T) {
	item := func(value string) webhook.Event {
		return webhook.Event{Provider: "adyen", ID: "8816178952380553-AUTHORISATION", Type: "AUTHORISATION",
			Raw: []byte(`{"amount":{"currency":"EUR","value":` + value + `},"eventCode":"AUTHORISATION","merchantAccountCode":"HookinboxECOM",` +
				`"merchantReference":"order-7731","pspReference":"8816178952380553","success":"true"}`)}
	}
	for _, value := range []string{`2500`, `"2500"`} {
		h := newFakeHarness(t)
		handle(t, h, item(value))
		want := []Order{{Provider: "adyen", Payment: "8816178952380553", Reference: "order-7731", Status: OrderPaid, Amount: 2500, Currency: "EUR"}}
		if diff := cmp.Diff(want, state(t, h).Orders); diff != "" {
			t.Errorf("value %s: orders (-want +got):\n%s", value, diff)
		}
	}
	h := newFakeHarness(t)
	if err := h.shop.Handle(context.Background(), item(`"25.00"`), h.ledger.For("adyen#8816178952380553-AUTHORISATION")); !webhook.IsPermanent(err) {
		t.Errorf("value \"25.00\": %v, want a permanent error", err)
	}
}

// shopifyOrderBody is a Shopify order with two SKUs and a customer.
func shopifyOrderBody(financialStatus string) []byte {
	return []byte(`{"id":820982911946154508,"financial_status":"` + financialStatus + `","total_price":"199.00","currency":"EUR",` +
		`"customer":{"id":115310627314723954},"line_items":[{"sku":"MUG-BLUE","variant_id":808950810,"quantity":2},` +
		`{"sku":"TEE-L","variant_id":49148385,"quantity":1}]}`)
}

// TestShopifyHeadersDecideNothing: Shopify signs the body only, so the
// topic and event id of a captured body can be anything. A pending order's
// body resent as orders/paid under fresh event ids changes no stock and
// credits no points; a paid order's body resent under other ids and topics
// counts once, since both effects are keyed by the order.
func TestShopifyHeadersDecideNothing(t *testing.T) {
	h := newFakeHarness(t)
	send := func(id, topic, status string) {
		t.Helper()
		handle(t, h, webhook.Event{Provider: "shopify", ID: id, Type: topic, Raw: shopifyOrderBody(status)})
	}
	send("e0a1f6b2-0001", "orders/create", "pending")
	send("forged-0002", "orders/paid", "pending")
	send("forged-0003", "orders/updated", "pending")
	if st := state(t, h); len(st.Stock) != 0 || len(st.Loyalty) != 0 {
		t.Fatalf("a pending order resent as paid: stock %+v, loyalty %+v; want neither touched", st.Stock, st.Loyalty)
	}
	send("e0a1f6b2-0004", "orders/paid", "paid")
	send("forged-0005", "orders/paid", "paid")
	send("forged-0006", "orders/updated", "paid")
	send("forged-0007", "orders/create", "paid")
	st := state(t, h)
	if diff := cmp.Diff([]Level{{ID: "MUG-BLUE", Amount: -2}, {ID: "TEE-L", Amount: -1}}, st.Stock); diff != "" {
		t.Errorf("stock after one paid order sent under four ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Level{{ID: "115310627314723954", Amount: 199}}, st.Loyalty); diff != "" {
		t.Errorf("loyalty after one paid order sent under four ids (-want +got):\n%s", diff)
	}
}

// TestShopHandlesOnlyWhatItRoutes: the types the processor may publish as
// a metric dimension are exactly those the shop handles.
func TestShopHandlesOnlyWhatItRoutes(t *testing.T) {
	s := newFakeHarness(t).shop
	for _, pt := range [][2]string{{"stripe", "checkout.session.completed"}, {"adyen", "REFUND"}, {"shopify", "orders/paid"}, {"gopay", "notification"}} {
		if !s.Handles(pt[0], pt[1]) {
			t.Errorf("Handles(%s, %s) = false", pt[0], pt[1])
		}
	}
	for _, pt := range [][2]string{{"stripe", "invoice.paid"}, {"adyen", "REPORT_AVAILABLE"}, {"github", "push"}, {"shopify", "made/up"}, {"github", "orders/paid"}} {
		if s.Handles(pt[0], pt[1]) {
			t.Errorf("Handles(%s, %s) = true", pt[0], pt[1])
		}
	}
}

// TestProviderEffectsRecordTheirResult: every effect of a Shopify, Adyen
// and GoPay event records what its write did, as the Stripe effects do, so
// the ledger (and `hookinbox inspect`) says whether the event changed the
// order, the stock and the points or found them already written.
func TestProviderEffectsRecordTheirResult(t *testing.T) {
	h := newFakeHarness(t)
	results := func(ev webhook.Event) map[string]string {
		t.Helper()
		handle(t, h, ev)
		recs, err := h.ledger.Records(context.Background(), ev.Key())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, r := range recs {
			got[r.Effect] = r.Result
		}
		return got
	}
	adyen := func(id, code, psp, original string) webhook.Event {
		return webhook.Event{Provider: "adyen", ID: id, Type: code,
			Raw: []byte(`{"amount":{"currency":"EUR","value":2500},"eventCode":"` + code + `","merchantReference":"order-7731",` +
				`"pspReference":"` + psp + `","originalReference":"` + original + `","success":"true"}`)}
	}
	tests := []struct {
		name string
		ev   webhook.Event
		want map[string]string
	}{
		{"shopify paid order", webhook.Event{Provider: "shopify", ID: "e0a1f6b2-1001", Type: "orders/paid", Raw: shopifyOrderBody("paid")},
			map[string]string{effectDecrementStock: "applied", effectAccruePoints: "applied"}},
		{"shopify the same order under another event", webhook.Event{Provider: "shopify", ID: "e0a1f6b2-1002", Type: "orders/updated", Raw: shopifyOrderBody("paid")},
			map[string]string{effectDecrementStock: "already done", effectAccruePoints: "already done"}},
		{"adyen refund", adyen("8816178952380554-REFUND", "REFUND", "8816178952380554", "8816178952380553"),
			map[string]string{effectMarkRefunded: "applied"}},
		{"adyen authorisation after its refund", adyen("8816178952380553-AUTHORISATION", "AUTHORISATION", "8816178952380553", ""),
			map[string]string{effectMarkPaid: "skipped: older than stored"}},
		{"gopay paid", webhook.Event{Provider: "gopay", ID: "3000006529", Type: "notification", IDOnly: true,
			Raw: []byte(`{"id":3000006529,"state":"PAID","amount":1000,"currency":"CZK","order_number":"001"}`)},
			map[string]string{effectMarkPaid: "applied"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, results(tt.ev)); diff != "" {
			t.Errorf("%s: effect results (-want +got):\n%s", tt.name, diff)
		}
	}
}

package processor_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/github"
	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/internal/providers/standard"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// accept sends req through the receiver and fails the test unless it is
// accepted.
func accept(t *testing.T, p *pipelinetest.Pipeline, req events.APIGatewayV2HTTPRequest) {
	t.Helper()
	if resp := p.Send(t, req); resp.StatusCode != http.StatusOK || !strings.Contains(resp.Body, "accepted") {
		t.Fatalf("delivery: %d %s, want 200 accepted", resp.StatusCode, resp.Body)
	}
}

// settleAll processes until every key is final, then checks each ended in
// want and that nothing was parked.
func settleAll(t *testing.T, p *pipelinetest.Pipeline, want inbox.Status, keys ...webhook.Key) {
	t.Helper()
	p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinal(t, keys) })
	for _, k := range keys {
		it, err := p.Inbox.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		if it.Status != want {
			t.Errorf("%s: %s (%s), want %s", k, it.Status, it.LastError, want)
		}
	}
	if reasons := p.DLQReasons(t); len(reasons) != 0 {
		t.Errorf("events parked: %v", reasons)
	}
}

// TestUnhandledTypesEndIgnoredWhateverTheirBody: on the emulators, through
// the receiver and the processor as Lambda builds them, a verified event
// of a type the shop has no handler for ends IGNORED, acknowledged and
// never parked, whatever its body holds beyond what the verifier reads;
// for every provider.
func TestUnhandledTypesEndIgnoredWhateverTheirBody(t *testing.T) {
	p := pipelinetest.New(t)
	now := time.Now()
	var keys []webhook.Key

	// Adyen's REPORT_AVAILABLE with its amount as a JSON string, as
	// Adyen's own examples send it: the signature covers the value's text,
	// "0", either way.
	signed := string(verifytest.AdyenNotification(pipelinetest.AdyenHMACKey, verifytest.AdyenItem{
		PspReference: "8516178952380553", MerchantAccount: "HookinboxECOM", MerchantReference: "testMerchantRef1",
		Value: 0, Currency: "EUR", EventCode: "REPORT_AVAILABLE", Success: true, EventDate: now}))
	if strings.Count(signed, `"value": 0`) != 1 {
		t.Fatalf("no single amount value in %s", signed)
	}
	report := strings.Replace(signed, `"value": 0`, `"value": "0"`, 1)
	accept(t, p, lambdalocal.WebhookEvent("adyen", "POST", nil, []byte(report)))
	keys = append(keys, "adyen#8516178952380553-REPORT_AVAILABLE")

	// Stripe: a type the shop does not handle, its object full of odd fields.
	const evt = "evt_1OddBody00000000000001"
	stripeBody := []byte(`{"id":"` + evt + `","object":"event","type":"invoice.paid","created":` + strconv.FormatInt(now.Unix(), 10) +
		`,"livemode":false,"data":{"object":{"object":7,"amount_paid":"a lot","customer":null}}}`)
	accept(t, p, p.Stack.StripeRequest(stripeBody))
	keys = append(keys, "stripe#"+evt)

	// Shopify: a topic the shop does not handle, on a body that would not
	// decode as an order.
	product := []byte(`{"id":"not a number","variants":null,"line_items":[{"quantity":"2"}]}`)
	accept(t, p, lambdalocal.WebhookEvent("shopify", "POST", shopify.Headers(product, pipelinetest.ShopifySecret, "e0a1f6b2-0201", "products/update", now), product))
	keys = append(keys, "shopify#e0a1f6b2-0201")

	// GitHub and Standard Webhooks: the shop handles none of their types.
	push := []byte(`{"after":12,"commits":"many","repository":null}`)
	accept(t, p, lambdalocal.WebhookEvent("github", "POST", github.Headers(push, pipelinetest.GitHubSecret, "72d3162e-cc78-11e3-81ab-4c9367dc0201", "push"), push))
	keys = append(keys, "github#72d3162e-cc78-11e3-81ab-4c9367dc0201")
	contact := []byte(`{"type":"contact.created","timestamp":17,"data":"nope"}`)
	accept(t, p, lambdalocal.WebhookEvent("standard", "POST", standard.Headers(contact, "msg_2KWPBgLlAfxdpx2AI54pPJ8201", now, pipelinetest.StandardSecret), contact))
	keys = append(keys, "standard#msg_2KWPBgLlAfxdpx2AI54pPJ8201")

	// GoPay: a payment in a state the shop does not act on.
	p.GoPay.SetPayment(standin.GoPayPayment{ID: 3000006201, OrderNumber: "order-4712", State: "CREATED", Amount: 1000, Currency: "CZK"})
	accept(t, p, lambdalocal.GoPayNotification("3000006201"))
	keys = append(keys, "gopay#3000006201")

	settleAll(t, p, inbox.Ignored, keys...)
	if st := p.State(t); len(st.Orders) != 0 || len(st.Stock) != 0 || len(st.Loyalty) != 0 || len(st.Emails) != 0 {
		t.Errorf("ignored events changed the shop: %+v", st)
	}
}

// TestUnsignedHeadersDecideNothing: on the emulators, Shopify and GitHub
// sign the body only, so whoever holds one captured delivery can resend
// its body under any topic or event name and a fresh event id. A pending
// order's body resent as orders/paid changes no stock and credits no
// points; a paid order's body resent under other ids counts once (as
// orders/paid it is one claim, and its effects are keyed by the order);
// and a made-up type mints no metric in
// the receiver or the processor: it is counted as "other".
func TestUnsignedHeadersDecideNothing(t *testing.T) {
	p := pipelinetest.New(t)
	now := time.Now()
	order := func(status string) []byte {
		return []byte(`{"id":820982911946154601,"name":"#1002","financial_status":"` + status + `","total_price":"199.00","currency":"EUR",` +
			`"customer":{"id":115310627314723901},"line_items":[{"id":866550311766439001,"sku":"MUG-RED","variant_id":808950801,"quantity":2},` +
			`{"id":141249953214522901,"sku":"TEE-M","variant_id":49148301,"quantity":1}]}`)
	}
	request := func(id, topic string, body []byte) events.APIGatewayV2HTTPRequest {
		return lambdalocal.WebhookEvent("shopify", "POST", shopify.Headers(body, pipelinetest.ShopifySecret, id, topic, now), body)
	}
	shopify := func(id, topic string, body []byte) webhook.Key {
		t.Helper()
		accept(t, p, request(id, topic, body))
		return webhook.NewKey("shopify", id)
	}

	pending := order("pending")
	settleAll(t, p, inbox.Done,
		shopify("e0a1f6b2-0301", "orders/create", pending),
		shopify("replayed-0302", "orders/paid", pending),
		shopify("replayed-0303", "orders/updated", pending))
	if st := p.State(t); len(st.Stock) != 0 || len(st.Loyalty) != 0 {
		t.Fatalf("a pending order's body resent as orders/paid: stock %+v, loyalty %+v; want neither touched", st.Stock, st.Loyalty)
	}

	paid := order("paid")
	accept(t, p, request("e0a1f6b2-0304", "orders/paid", paid))
	// As orders/paid it is keyed by the order under any id.
	if resp := p.Send(t, request("replayed-0305", "orders/paid", paid)); !strings.Contains(resp.Body, "duplicate") {
		t.Fatalf("the paid order's body resent as orders/paid: %d %s, want 200 duplicate", resp.StatusCode, resp.Body)
	}
	settleAll(t, p, inbox.Done, "shopify#order-820982911946154601-paid", shopify("replayed-0306", "orders/create", paid))
	st := p.State(t)
	if diff := cmp.Diff([]shop.Level{{ID: "MUG-RED", Amount: -2}, {ID: "TEE-M", Amount: -1}}, st.Stock); diff != "" {
		t.Errorf("stock after one paid order under three ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]shop.Level{{ID: "115310627314723901", Amount: 199}}, st.Loyalty); diff != "" {
		t.Errorf("loyalty after one paid order under three ids (-want +got):\n%s", diff)
	}

	// Made-up types: a captured GitHub body under an event name nobody
	// sends, and the paid order under a topic nobody sends.
	var b [6]byte
	_, _ = rand.Read(b[:])
	madeUp := "made-up-" + hex.EncodeToString(b[:])
	issue := []byte(`{"action":"opened","issue":{"number":1347},"repository":{"full_name":"octocat/Hello-World"}}`)
	accept(t, p, lambdalocal.WebhookEvent("github", "POST", github.Headers(issue, pipelinetest.GitHubSecret, "72d3162e-cc78-11e3-81ab-4c9367dc0301", madeUp), issue))
	settleAll(t, p, inbox.Ignored, "github#72d3162e-cc78-11e3-81ab-4c9367dc0301", shopify("replayed-0307", madeUp, paid))

	counted := map[string]float64{} // "<provider> <metric>" of the lines typed "other"
	for _, l := range p.Metrics(t) {
		for name, v := range l.Dims {
			if strings.Contains(v, "made-up") {
				t.Errorf("metric line %v has dimension %s=%q", l.Values, name, v)
			}
		}
		if l.Dims[metrics.DimEventType] == metrics.OtherEventType {
			for m, v := range l.Values {
				counted[l.Dims[metrics.DimProvider]+" "+m] += v
			}
		}
	}
	for _, want := range []string{"github " + metrics.Received, "github " + metrics.Ignored, "shopify " + metrics.Received, "shopify " + metrics.Ignored} {
		if counted[want] < 1 {
			t.Errorf("no %s counted with EventType %q; counted: %v", want, metrics.OtherEventType, counted)
		}
	}
}

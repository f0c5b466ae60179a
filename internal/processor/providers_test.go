package processor_test

import (
	"context"
	"errors"
	"net/http"
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
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestProvidersEndToEnd: for every provider, on dynalite and local-aws-sqs
// through the functions as Lambda builds them, a signed delivery is
// accepted once and processed, its redelivery adds no message and no
// second effect, and a forged one is refused with nothing written.
func TestProvidersEndToEnd(t *testing.T) {
	p := pipelinetest.New(t)
	ctx := context.Background()
	now := time.Now()
	// settle processes until every key is final and the queue is empty.
	settle := func(t *testing.T, keys ...webhook.Key) {
		t.Helper()
		p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinal(t, keys) })
		if msgs := pipelinetest.Peek(t, p.Events); len(msgs) != 0 {
			t.Fatalf("%d messages left on the events queue", len(msgs))
		}
	}
	// twice sends req twice: accepted, then a duplicate that adds no message.
	twice := func(t *testing.T, req events.APIGatewayV2HTTPRequest, keys ...webhook.Key) {
		t.Helper()
		if resp := p.Send(t, req); resp.StatusCode != http.StatusOK {
			t.Fatalf("first delivery: %d %s", resp.StatusCode, resp.Body)
		}
		settle(t, keys...)
		if resp := p.Send(t, req); resp.StatusCode != http.StatusOK {
			t.Fatalf("redelivery: %d %s", resp.StatusCode, resp.Body)
		}
		if msgs := pipelinetest.Peek(t, p.Events); len(msgs) != 0 {
			t.Fatalf("the redelivery added %d messages", len(msgs))
		}
	}
	refused := func(t *testing.T, req events.APIGatewayV2HTTPRequest, status int, key webhook.Key) {
		t.Helper()
		if resp := p.Send(t, req); resp.StatusCode != status {
			t.Errorf("forged delivery: %d %s, want %d", resp.StatusCode, resp.Body, status)
		}
		if _, err := p.Inbox.Get(ctx, key); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("forged delivery wrote %s: %v", key, err)
		}
		if msgs := pipelinetest.Peek(t, p.Events); len(msgs) != 0 {
			t.Errorf("forged delivery sent %d messages", len(msgs))
		}
	}
	status := func(t *testing.T, key webhook.Key) inbox.Status {
		t.Helper()
		it, err := p.Inbox.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return it.Status
	}

	t.Run("github", func(t *testing.T) {
		body := []byte(`{"action":"opened","issue":{"number":1347,"title":"Found a bug"},"repository":{"full_name":"octocat/Hello-World"}}`)
		const id = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
		twice(t, lambdalocal.WebhookEvent("github", "POST", github.Headers(body, pipelinetest.GitHubSecret, id, "issues"), body), "github#"+id)
		if got := status(t, "github#"+id); got != inbox.Ignored {
			t.Errorf("status %s, want IGNORED (the shop has no GitHub handler)", got)
		}
		refused(t, lambdalocal.WebhookEvent("github", "POST", github.Headers(body, "attacker", "forged-1", "issues"), body), 401, "github#forged-1")

		// A hook with the form content type: signed over the form, stored
		// and processed as the JSON event it carries.
		const formID = "72d3162e-cc78-11e3-81ab-4c9367dc0959"
		form, headers := github.Form(body, pipelinetest.GitHubSecret, formID, "issues")
		twice(t, lambdalocal.WebhookEvent("github", "POST", headers, form), "github#"+formID)
		if got := status(t, "github#"+formID); got != inbox.Ignored {
			t.Errorf("form delivery: status %s, want IGNORED", got)
		}
		if raw, err := p.Inbox.Payload(ctx, "github#"+formID); err != nil || string(raw) != string(body) {
			t.Errorf("form delivery: stored payload %q, %v; want the JSON event", raw, err)
		}
		_, forged := github.Form(body, "attacker", "forged-form", "issues")
		refused(t, lambdalocal.WebhookEvent("github", "POST", forged, form), 401, "github#forged-form")
	})

	t.Run("standard", func(t *testing.T) {
		body := []byte(`{"type":"contact.created","timestamp":"2026-11-30T12:00:00Z","data":{"id":"c_1"}}`)
		const id = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"
		twice(t, lambdalocal.WebhookEvent("standard", "POST", standard.Headers(body, id, now, pipelinetest.StandardSecret), body), "standard#"+id)
		if got := status(t, "standard#"+id); got != inbox.Ignored {
			t.Errorf("status %s, want IGNORED", got)
		}
		refused(t, lambdalocal.WebhookEvent("standard", "POST", standard.Headers(body, "msg_forged", now, "whsec_YXR0YWNrZXI="), body), 401, "standard#msg_forged")

		// v1a: signed with the sender's ed25519 key, verified with the
		// public key the local receiver holds beside its whsec_ secret.
		const v1aID = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4X"
		twice(t, lambdalocal.WebhookEvent("standard", "POST", standard.Headers(body, v1aID, now, pipeline.StandardSigningKey), body), "standard#"+v1aID)
		if got := status(t, "standard#"+v1aID); got != inbox.Ignored {
			t.Errorf("v1a: status %s, want IGNORED", got)
		}
		const attacker = "whsk_YXR0YWNrZXItc2lnbmluZy1rZXktb2YtMzItYnl0ZXM=" // another 32-byte key
		refused(t, lambdalocal.WebhookEvent("standard", "POST", standard.Headers(body, "msg_forged_v1a", now, attacker), body), 401, "standard#msg_forged_v1a")
	})

	t.Run("shopify", func(t *testing.T) {
		order := func(status string) []byte {
			return []byte(`{"id":820982911946154508,"name":"#1001","financial_status":"` + status + `","total_price":"199.00","currency":"EUR",` +
				`"customer":{"id":115310627314723954},"line_items":[` +
				`{"id":866550311766439020,"sku":"MUG-BLUE","variant_id":808950810,"quantity":2},` +
				`{"id":141249953214522974,"sku":"TEE-L","variant_id":49148385,"quantity":1},` +
				`{"id":141249953214522975,"sku":"MUG-BLUE","variant_id":808950810,"quantity":1}]}`)
		}
		send := func(topic, eventID, status string) events.APIGatewayV2HTTPRequest {
			b := order(status)
			return lambdalocal.WebhookEvent("shopify", "POST", shopify.Headers(b, pipelinetest.ShopifySecret, eventID, topic, now), b)
		}
		// orders/updated (already paid) lands before orders/create, then
		// orders/paid with the unprefixed headers of Shopify's newer
		// deliveries (Shopify-Hmac-Sha256, Shopify-Topic, ...): each twice;
		// the paid order's orders/paid is keyed by the order.
		twice(t, send("orders/updated", "e0a1f6b2-0001", "paid"), "shopify#e0a1f6b2-0001")
		twice(t, send("orders/create", "e0a1f6b2-0002", "pending"), "shopify#e0a1f6b2-0002")
		paid := send("orders/paid", "e0a1f6b2-0003", "paid")
		paid.Headers = shopify.Unprefixed(paid.Headers)
		twice(t, paid, "shopify#order-820982911946154508-paid")
		st := p.State(t)
		wantStock := []shop.Level{{ID: "MUG-BLUE", Amount: -3}, {ID: "TEE-L", Amount: -1}}
		if diff := cmp.Diff(wantStock, st.Stock); diff != "" {
			t.Errorf("stock (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]shop.Level{{ID: "115310627314723954", Amount: 199}}, st.Loyalty); diff != "" {
			t.Errorf("loyalty points (-want +got):\n%s", diff)
		}
		b := order("paid")
		refused(t, lambdalocal.WebhookEvent("shopify", "POST", shopify.Headers(b, "attacker", "forged-2", "orders/paid", now), b), 401, "shopify#forged-2")
	})

	t.Run("adyen", func(t *testing.T) {
		item := func(code, psp, original string) verifytest.AdyenItem {
			return verifytest.AdyenItem{PspReference: psp, OriginalReference: original, MerchantAccount: "HookinboxECOM",
				MerchantReference: "order-7731", Value: 2500, Currency: "EUR", EventCode: code, Success: true, EventDate: now}
		}
		batch := verifytest.AdyenNotification(pipelinetest.AdyenHMACKey, item("AUTHORISATION", "8816178952380553", ""), item("CAPTURE", "8816178952380553", ""))
		req := lambdalocal.WebhookEvent("adyen", "POST", map[string]string{"content-type": "application/json"}, batch)
		resp := p.Send(t, req)
		if resp.StatusCode != 200 || resp.Body != "[accepted]" {
			t.Fatalf("batch: %d %q, want 200 [accepted]", resp.StatusCode, resp.Body)
		}
		keys := []webhook.Key{"adyen#8816178952380553-AUTHORISATION", "adyen#8816178952380553-CAPTURE"}
		settle(t, keys...)
		twice(t, req, keys...) // the same batch again: [accepted], nothing new
		refund := verifytest.AdyenNotification(pipelinetest.AdyenHMACKey, item("REFUND", "8816178952380777", "8816178952380553"))
		twice(t, lambdalocal.WebhookEvent("adyen", "POST", nil, refund), "adyen#8816178952380777-REFUND")
		want := []shop.Order{{Provider: "adyen", Payment: "8816178952380553", Reference: "order-7731", Status: shop.OrderRefunded, Amount: 2500, Currency: "EUR"}}
		if diff := cmp.Diff(want, ordersOf(p.State(t), "adyen")); diff != "" {
			t.Errorf("orders (-want +got):\n%s", diff)
		}
		if got := status(t, keys[1]); got != inbox.Ignored {
			t.Errorf("CAPTURE: %s, want IGNORED", got)
		}
		forged := strings.Replace(string(verifytest.AdyenNotification(pipelinetest.AdyenHMACKey, item("AUTHORISATION", "9916178952380001", ""), item("AUTHORISATION", "9916178952380002", ""))),
			`"merchantReference": "order-7731"`, `"merchantReference": "order-0000"`, 1)
		refused(t, lambdalocal.WebhookEvent("adyen", "POST", nil, []byte(forged)), 401, "adyen#9916178952380002-AUTHORISATION")
		if _, err := p.Inbox.Get(ctx, "adyen#9916178952380001-AUTHORISATION"); err == nil {
			t.Error("a batch with one bad item claimed its good item")
		}
	})

	t.Run("gopay", func(t *testing.T) {
		const id = "3000006529"
		key := webhook.Key("gopay#" + id)
		p.GoPay.SetPayment(standin.GoPayPayment{ID: 3000006529, OrderNumber: "order-4711", State: "PAID", Amount: 1000, Currency: "CZK"})
		// PAID notified twice while the fetch is pending: one message.
		for i, want := range []string{"accepted", "duplicate"} {
			if resp := p.Send(t, lambdalocal.GoPayNotification(id)); resp.StatusCode != 200 || !strings.Contains(resp.Body, want) {
				t.Fatalf("notification %d: %d %s, want %s", i+1, resp.StatusCode, resp.Body, want)
			}
		}
		if msgs := pipelinetest.Peek(t, p.Events); len(msgs) != 1 {
			t.Fatalf("%d messages for two notifications while pending, want 1", len(msgs))
		}
		settle(t, key)
		// A notification after processing is fetched again: PAID again
		// changes nothing, REFUNDED records the refund once.
		again := func() {
			t.Helper()
			if resp := p.Send(t, lambdalocal.GoPayNotification(id)); resp.StatusCode != 200 || !strings.Contains(resp.Body, "accepted") {
				t.Fatalf("notification after processing: %d %s, want accepted (fetched again)", resp.StatusCode, resp.Body)
			}
			settle(t, key)
		}
		again()
		p.GoPay.SetPayment(standin.GoPayPayment{ID: 3000006529, OrderNumber: "order-4711", State: "REFUNDED", Amount: 1000, Currency: "CZK"})
		again()
		if n := p.GoPay.Fetches(3000006529); n != 3 {
			t.Errorf("payment fetched %d times, want 3 (once per processed notification)", n)
		}
		want := []shop.Order{{Provider: "gopay", Payment: id, Reference: "order-4711", Status: shop.OrderRefunded, Amount: 1000, Currency: "CZK"}}
		if diff := cmp.Diff(want, ordersOf(p.State(t), "gopay")); diff != "" {
			t.Errorf("orders (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"mark-order-paid", "mark-order-refunded"}, recordedEffects(t, p, key)); diff != "" {
			t.Errorf("effects recorded (-want +got):\n%s", diff)
		}
		// An id GoPay does not know is fetched twice (a retry after a
		// backoff), then ends IGNORED, not parked; notifications of it are
		// then duplicates, not fetched again.
		if resp := p.Send(t, lambdalocal.GoPayNotification("3000000001")); resp.StatusCode != 200 {
			t.Fatalf("unknown payment: %d %s", resp.StatusCode, resp.Body)
		}
		settle(t, "gopay#3000000001")
		if it, err := p.Inbox.Get(ctx, "gopay#3000000001"); err != nil || it.Status != inbox.Ignored || it.Outcome != "not found at gopay" {
			t.Errorf("unknown payment: %+v, %v; want IGNORED, not found at gopay", it, err)
		}
		for range 5 {
			if resp := p.Send(t, lambdalocal.GoPayNotification("3000000001")); resp.StatusCode != 200 || !strings.Contains(resp.Body, "duplicate") {
				t.Fatalf("unknown payment notified again: %d %s, want duplicate", resp.StatusCode, resp.Body)
			}
		}
		if msgs := pipelinetest.Peek(t, p.Events); len(msgs) != 0 || p.GoPay.Fetches(3000000001) != 2 {
			t.Errorf("unknown payment notified again: %d messages, %d fetches; want none and 2", len(msgs), p.GoPay.Fetches(3000000001))
		}
		refused(t, lambdalocal.GoPayNotification("30000065x9"), 400, "gopay#30000065x9")
	})
	if reasons := p.DLQReasons(t); len(reasons) != 0 {
		t.Errorf("events parked: %v", reasons)
	}
}

func ordersOf(st shop.State, provider string) []shop.Order {
	var out []shop.Order
	for _, o := range st.Orders {
		if o.Provider == provider {
			out = append(out, o)
		}
	}
	return out
}

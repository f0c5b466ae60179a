package receiver_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/github"
	"github.com/hookinbox/hookinbox/internal/providers/paddle"
	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/internal/providers/standard"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

func adyenItem(psp, code string) verifytest.AdyenItem {
	return verifytest.AdyenItem{PspReference: psp, MerchantAccount: "HookinboxECOM", MerchantReference: "order-1",
		Value: 2500, Currency: "EUR", EventCode: code, Success: true, EventDate: now}
}

// TestProvidersAcceptedOnceForgedRefused: for each provider, a signed
// delivery is claimed and enqueued once, its redelivery adds nothing, and
// the hostile versions are refused with their documented status, writing
// and sending nothing.
func TestProvidersAcceptedOnceForgedRefused(t *testing.T) {
	ghBody := []byte(`{"action":"opened","issue":{"number":1347}}`)
	shBody := []byte(`{"id":820982911946154508,"line_items":[]}`)
	stdBody := []byte(`{"type":"user.created","timestamp":"2026-11-30T12:00:00Z","data":{"id":"u_1"}}`)
	adyenBody := verifytest.AdyenNotification(adyenKey, adyenItem("8816178952380553", "AUTHORISATION"), adyenItem("8816178952380553", "CAPTURE"))
	huge := []byte(`{"pad":"` + strings.Repeat("x", receiver.DefaultMaxBodyBytes) + `"}`)
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{}
		for a, b := range h {
			out[a] = b
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	gh := github.Headers(ghBody, githubSecret, "72d3162e-cc78-11e3-81ab-4c9367dc0958", "issues")
	sh := shopify.Headers(shBody, shopifySecret, "98880550-7158-44d4-b7cd-2c97c8a091b5", "orders/create", now)
	std := standard.Headers(stdBody, "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", now, standardSecret)
	pdBody := []byte(`{"event_id":"evt_01hv8x2acma6xvfynhhb0s8z7c","event_type":"transaction.completed","data":{"id":"txn_01hv8wptq8987qeep44cyrewp9"}}`)
	pd := map[string]string{"content-type": "application/json", "paddle-signature": paddle.SignatureHeader(pdBody, now, paddleSecret)}
	mollieForm := func(body string) events.APIGatewayV2HTTPRequest {
		return lambdalocal.WebhookEvent("mollie", "POST", map[string]string{"content-type": "application/x-www-form-urlencoded"}, []byte(body))
	}
	oneForged := strings.Replace(string(verifytest.AdyenNotification(adyenKey, adyenItem("A1", "AUTHORISATION"), adyenItem("A2", "REFUND"))),
		`"pspReference": "A2"`, `"pspReference": "A3"`, 1)

	tests := []struct {
		provider string
		good     events.APIGatewayV2HTTPRequest
		keys     []webhook.Key
		answer   string // the body of a 200, when not JSON
		hostile  map[string]struct {
			req    events.APIGatewayV2HTTPRequest
			status int
		}
	}{
		{"github", lambdalocal.WebhookEvent("github", "POST", gh, ghBody), []webhook.Key{"github#72d3162e-cc78-11e3-81ab-4c9367dc0958"}, "", map[string]struct {
			req    events.APIGatewayV2HTTPRequest
			status int
		}{
			"forged":           {lambdalocal.WebhookEvent("github", "POST", github.Headers(ghBody, "attacker", "d-1", "issues"), ghBody), 401},
			"no signature":     {lambdalocal.WebhookEvent("github", "POST", with(gh, "x-hub-signature-256", ""), ghBody), 401},
			"missing id":       {lambdalocal.WebhookEvent("github", "POST", with(gh, "x-github-delivery", ""), ghBody), 400},
			"malformed body":   {lambdalocal.WebhookEvent("github", "POST", github.Headers([]byte("x=1"), githubSecret, "d-2", "issues"), []byte("x=1")), 400},
			"oversized body":   {lambdalocal.WebhookEvent("github", "POST", github.Headers(huge, githubSecret, "d-3", "issues"), huge), 413},
			"wrong method GET": {lambdalocal.WebhookEvent("github", "GET", gh, ghBody), 405},
		}},
		{"shopify", lambdalocal.WebhookEvent("shopify", "POST", sh, shBody), []webhook.Key{"shopify#98880550-7158-44d4-b7cd-2c97c8a091b5"}, "", map[string]struct {
			req    events.APIGatewayV2HTTPRequest
			status int
		}{
			"forged":         {lambdalocal.WebhookEvent("shopify", "POST", shopify.Headers(shBody, "attacker", "e-1", "orders/create", now), shBody), 401},
			"missing id":     {lambdalocal.WebhookEvent("shopify", "POST", with(with(sh, "x-shopify-event-id", ""), "x-shopify-webhook-id", ""), shBody), 400},
			"malformed body": {lambdalocal.WebhookEvent("shopify", "POST", shopify.Headers([]byte("[]"), shopifySecret, "e-2", "orders/create", now), []byte("[]")), 400},
			"oversized body": {lambdalocal.WebhookEvent("shopify", "POST", shopify.Headers(huge, shopifySecret, "e-3", "orders/create", now), huge), 413},
		}},
		{"standard", lambdalocal.WebhookEvent("standard", "POST", std, stdBody), []webhook.Key{"standard#msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"}, "", map[string]struct {
			req    events.APIGatewayV2HTTPRequest
			status int
		}{
			"forged":          {lambdalocal.WebhookEvent("standard", "POST", standard.Headers(stdBody, "msg_1", now, "whsec_YXR0YWNrZXI="), stdBody), 401},
			"missing id":      {lambdalocal.WebhookEvent("standard", "POST", standard.Headers(stdBody, "", now, standardSecret), stdBody), 400},
			"stale timestamp": {lambdalocal.WebhookEvent("standard", "POST", standard.Headers(stdBody, "msg_3", now.Add(-6*time.Minute), standardSecret), stdBody), 401},
			"malformed body":  {lambdalocal.WebhookEvent("standard", "POST", standard.Headers([]byte("nope"), "msg_4", now, standardSecret), []byte("nope")), 400},
			"oversized body":  {lambdalocal.WebhookEvent("standard", "POST", standard.Headers(huge, "msg_5", now, standardSecret), huge), 413},
		}},
		{"adyen", lambdalocal.WebhookEvent("adyen", "POST", map[string]string{"content-type": "application/json"}, adyenBody),
			[]webhook.Key{"adyen#8816178952380553-AUTHORISATION", "adyen#8816178952380553-CAPTURE"}, "[accepted]", map[string]struct {
				req    events.APIGatewayV2HTTPRequest
				status int
			}{
				"forged":               {lambdalocal.WebhookEvent("adyen", "POST", nil, verifytest.AdyenNotification("ABCDEF", adyenItem("B1", "AUTHORISATION"))), 401},
				"one bad item of two":  {lambdalocal.WebhookEvent("adyen", "POST", nil, []byte(oneForged)), 401},
				"missing id":           {lambdalocal.WebhookEvent("adyen", "POST", nil, verifytest.AdyenNotification(adyenKey, adyenItem("", "AUTHORISATION"))), 400},
				"malformed body":       {lambdalocal.WebhookEvent("adyen", "POST", nil, []byte(`{"notificationItems":`)), 401},
				"oversized body":       {lambdalocal.WebhookEvent("adyen", "POST", nil, huge), 413},
				"no signature in item": {lambdalocal.WebhookEvent("adyen", "POST", nil, []byte(strings.Replace(string(adyenBody), "hmacSignature", "x", -1))), 401},
			}},
		{"paddle", lambdalocal.WebhookEvent("paddle", "POST", pd, pdBody), []webhook.Key{"paddle#evt_01hv8x2acma6xvfynhhb0s8z7c"}, "", map[string]struct {
			req    events.APIGatewayV2HTTPRequest
			status int
		}{
			"forged":          {lambdalocal.WebhookEvent("paddle", "POST", map[string]string{"paddle-signature": paddle.SignatureHeader(pdBody, now, "pdl_ntfset_attacker")}, pdBody), 401},
			"no signature":    {lambdalocal.WebhookEvent("paddle", "POST", with(pd, "paddle-signature", ""), pdBody), 401},
			"stale timestamp": {lambdalocal.WebhookEvent("paddle", "POST", map[string]string{"paddle-signature": paddle.SignatureHeader(pdBody, now.Add(-6*time.Minute), paddleSecret)}, pdBody), 401},
			"missing id":      {lambdalocal.WebhookEvent("paddle", "POST", map[string]string{"paddle-signature": paddle.SignatureHeader([]byte(`{"event_type":"x"}`), now, paddleSecret)}, []byte(`{"event_type":"x"}`)), 400},
			"malformed body":  {lambdalocal.WebhookEvent("paddle", "POST", map[string]string{"paddle-signature": paddle.SignatureHeader([]byte("nope"), now, paddleSecret)}, []byte("nope")), 400},
			"oversized body":  {lambdalocal.WebhookEvent("paddle", "POST", map[string]string{"paddle-signature": paddle.SignatureHeader(huge, now, paddleSecret)}, huge), 413},
		}},
		{"mollie", mollieForm("id=tr_WDqYK6vllg"), []webhook.Key{"mollie#tr_WDqYK6vllg"}, "", map[string]struct {
			req    events.APIGatewayV2HTTPRequest
			status int
		}{
			"missing id":     {mollieForm("payment=tr_WDqYK6vllg"), 400},
			"an order id":    {mollieForm("id=ord_kEn1PlbGa"), 400},
			"too long":       {mollieForm("id=tr_" + strings.Repeat("a", 30)), 400},
			"GET":            {lambdalocal.WebhookEvent("mollie", "GET", nil, nil), 405},
			"oversized body": {mollieForm("id=tr_WDqYK6vllg&pad=" + string(huge)), 413},
		}},
		{"gopay", lambdalocal.GoPayNotification("3000006529"), []webhook.Key{"gopay#3000006529"}, "", map[string]struct {
			req    events.APIGatewayV2HTTPRequest
			status int
		}{
			"missing id": {lambdalocal.GoPayNotification(""), 400},
			"not digits": {lambdalocal.GoPayNotification("3000006529; DROP"), 400},
			"too long":   {lambdalocal.GoPayNotification(strings.Repeat("1", 20)), 400},
			"POST":       {lambdalocal.WebhookEvent("gopay", "POST", nil, []byte(`{"id":1}`)), 405},
			"oversized body": {func() events.APIGatewayV2HTTPRequest {
				r := lambdalocal.GoPayNotification("1")
				r.Body = string(huge)
				return r
			}(), 413},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.provider, func(t *testing.T) {
			store, q := inboxtest.NewMemory(), &fakeQueue{}
			h := receiver.New(receiver.Config{}, allProviders(t, fixed), intake.New(intake.Config{Now: fixed}, store, q, nil), nil)
			ctx := context.Background()
			for name, hc := range tc.hostile {
				resp, _ := h.Handle(ctx, hc.req)
				if resp.StatusCode != hc.status {
					t.Errorf("%s: %d %s, want %d", name, resp.StatusCode, resp.Body, hc.status)
				}
			}
			if pending, _ := store.Pending(ctx, now.Add(time.Hour), 100); len(pending) != 0 || len(q.Sent()) != 0 {
				t.Fatalf("hostile deliveries wrote %d claims and sent %d messages", len(pending), len(q.Sent()))
			}
			for i, want := range []string{"accepted", "duplicate"} {
				resp, _ := h.Handle(ctx, tc.good)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("delivery %d: %d %s", i+1, resp.StatusCode, resp.Body)
				}
				if tc.answer != "" {
					if resp.Body != tc.answer || resp.Headers["content-type"] != "text/plain" {
						t.Errorf("delivery %d: body %q (%s), want exactly %q", i+1, resp.Body, resp.Headers["content-type"], tc.answer)
					}
				} else if got := answer(t, resp); got != want {
					t.Errorf("delivery %d: %s, want %s", i+1, got, want)
				}
			}
			var sent []webhook.Key
			for _, env := range q.Sent() {
				sent = append(sent, env.Key)
			}
			if strings.Join(keyStrings(sent), " ") != strings.Join(keyStrings(tc.keys), " ") {
				t.Errorf("messages for %v, want one each for %v", sent, tc.keys)
			}
		})
	}
}

func keyStrings(keys []webhook.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = string(k)
	}
	return out
}

// TestUnknownOrDisabledProviderIs404: a provider hookinbox does not speak,
// or one whose secret is not set, answers 404.
func TestUnknownOrDisabledProviderIs404(t *testing.T) {
	store, q := inboxtest.NewMemory(), &fakeQueue{}
	h := receiver.New(receiver.Config{}, stripeVerifiers(fixed), intake.New(intake.Config{Now: fixed}, store, q, nil), nil)
	for _, p := range []string{"github", "adyen", "paypal", ""} {
		resp, _ := h.Handle(context.Background(), lambdalocal.WebhookEvent(p, "POST", nil, []byte(`{}`)))
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("provider %q: %d, want 404", p, resp.StatusCode)
		}
	}
	if resp, _ := h.Handle(context.Background(), lambdalocal.GoPayNotification("3000006529")); resp.StatusCode != http.StatusNotFound {
		t.Errorf("gopay disabled: %d, want 404", resp.StatusCode)
	}
}

// TestGoPayOnePendingFetchPerID: a repeat while the fetch is pending
// enqueues nothing; while it runs, the repeat is answered 503 so GoPay
// delivers it again; once finished, a new notification is claimed and
// enqueued again, so the new state is fetched.
func TestGoPayOnePendingFetchPerID(t *testing.T) {
	store, q := inboxtest.NewMemory(), &fakeQueue{}
	h := receiver.New(receiver.Config{}, allProviders(t, fixed), intake.New(intake.Config{Now: fixed}, store, q, nil), nil)
	ctx := context.Background()
	status := func(want int, wantBody string) {
		t.Helper()
		resp, _ := h.Handle(ctx, lambdalocal.GoPayNotification("3000006529"))
		if resp.StatusCode != want || (wantBody != "" && answer(t, resp) != wantBody) {
			t.Fatalf("notification: %d %s, want %d %s", resp.StatusCode, resp.Body, want, wantBody)
		}
	}
	status(200, "accepted")
	for range 50 {
		status(200, "duplicate")
	}
	if n := len(q.Sent()); n != 1 {
		t.Fatalf("51 notifications while pending sent %d messages, want 1", n)
	}
	if _, err := store.Lease(ctx, "gopay#3000006529", "w1", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	status(503, "")
	if _, err := store.Finish(ctx, "gopay#3000006529", "w1", inbox.Result{Status: inbox.Done, At: now}); err != nil {
		t.Fatal(err)
	}
	status(200, "accepted")
	if n := len(q.Sent()); n != 2 {
		t.Fatalf("notification after the fetch finished: %d messages in all, want 2", n)
	}
}

// TestGitHubFormDeliveryStoresTheEvent: a form-encoded GitHub delivery
// (payload=<URL-encoded JSON>, signed over the form) is accepted once, and
// what is stored for the processor is the JSON event, not the form; the
// same event sent as JSON by a hook with the other content type is stored
// alike.
func TestGitHubFormDeliveryStoresTheEvent(t *testing.T) {
	event := []byte(`{"action":"opened","issue":{"number":1347,"title":"a + b & c = 100%"}}`)
	store, q := inboxtest.NewMemory(), &fakeQueue{}
	h := receiver.New(receiver.Config{}, allProviders(t, fixed), intake.New(intake.Config{Now: fixed}, store, q, nil), nil)
	ctx := context.Background()
	form, headers := github.Form(event, githubSecret, "d-form", "issues")
	for i, want := range []string{"accepted", "duplicate"} {
		resp, _ := h.Handle(ctx, lambdalocal.WebhookEvent("github", "POST", headers, form))
		if resp.StatusCode != http.StatusOK || answer(t, resp) != want {
			t.Fatalf("form delivery %d: %d %s, want 200 %s", i+1, resp.StatusCode, resp.Body, want)
		}
	}
	resp, _ := h.Handle(ctx, lambdalocal.WebhookEvent("github", "POST", github.Headers(event, githubSecret, "d-json", "issues"), event))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("JSON delivery: %d %s", resp.StatusCode, resp.Body)
	}
	for _, key := range []webhook.Key{"github#d-form", "github#d-json"} {
		if raw, err := store.Payload(ctx, key); err != nil || string(raw) != string(event) {
			t.Errorf("stored payload of %s = %q, %v; want the JSON event", key, raw, err)
		}
	}
	if n := len(q.Sent()); n != 2 {
		t.Errorf("%d messages, want one per event", n)
	}
	_, forged := github.Form(event, "attacker", "d-forged", "issues")
	if resp, _ := h.Handle(ctx, lambdalocal.WebhookEvent("github", "POST", forged, form)); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("forged form delivery: %d %s, want 401", resp.StatusCode, resp.Body)
	}
	if _, err := store.Get(ctx, "github#d-forged"); err == nil {
		t.Error("forged form delivery was claimed")
	}
}

// TestShopifyUnprefixedHeadersAccepted: a delivery with the unprefixed
// headers of Shopify's newer deliveries (Shopify-Hmac-Sha256,
// Shopify-Topic, Shopify-Event-Id, ...) is claimed once under its event id
// like an X-Shopify- one; forged, it is refused with nothing written.
func TestShopifyUnprefixedHeadersAccepted(t *testing.T) {
	body := []byte(`{"id":820982911946154508,"financial_status":"pending","line_items":[]}`)
	store, q := inboxtest.NewMemory(), &fakeQueue{}
	h := receiver.New(receiver.Config{}, allProviders(t, fixed), intake.New(intake.Config{Now: fixed}, store, q, nil), nil)
	ctx := context.Background()
	headers := shopify.Unprefixed(shopify.Headers(body, shopifySecret, "98880550-7158-44d4-b7cd-2c97c8a091b6", "orders/paid", now))
	forged := shopify.Unprefixed(shopify.Headers(body, "attacker", "e-forged", "orders/paid", now))
	if resp, _ := h.Handle(ctx, lambdalocal.WebhookEvent("shopify", "POST", forged, body)); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("forged: %d %s, want 401", resp.StatusCode, resp.Body)
	}
	for i, want := range []string{"accepted", "duplicate"} {
		resp, _ := h.Handle(ctx, lambdalocal.WebhookEvent("shopify", "POST", headers, body))
		if resp.StatusCode != http.StatusOK || answer(t, resp) != want {
			t.Fatalf("delivery %d: %d %s, want 200 %s", i+1, resp.StatusCode, resp.Body, want)
		}
	}
	sent := q.Sent()
	if len(sent) != 1 || sent[0].Key != "shopify#98880550-7158-44d4-b7cd-2c97c8a091b6" || sent[0].Type != "orders/paid" {
		t.Fatalf("messages %+v, want one for shopify#98880550-7158-44d4-b7cd-2c97c8a091b6 orders/paid", sent)
	}
	it, err := store.Get(ctx, sent[0].Key)
	if err != nil || !it.Created.Equal(now) {
		t.Errorf("claim %+v, %v; want created at Shopify-Triggered-At %s", it, err, now)
	}
	if _, err := store.Get(ctx, "shopify#e-forged"); err == nil {
		t.Error("the forged delivery was claimed")
	}
}

// TestStandardV1aAccepted: a Standard Webhooks delivery signed v1a
// (ed25519) is claimed once when the receiver holds the sender's whpk_
// public key beside its whsec_ secret; signed with another key, or stale,
// it is refused with nothing written.
func TestStandardV1aAccepted(t *testing.T) {
	body := []byte(`{"type":"user.created","timestamp":"2026-11-30T12:00:00Z","data":{"id":"u_1"}}`)
	store, q := inboxtest.NewMemory(), &fakeQueue{}
	h := receiver.New(receiver.Config{}, allProviders(t, fixed), intake.New(intake.Config{Now: fixed}, store, q, nil), nil)
	ctx := context.Background()
	const otherKey = "whsk_YW5vdGhlci1zdGFuZGFyZC13ZWJob29rcy1zZW5kZXI=" // 32 bytes, not ours
	for name, req := range map[string]events.APIGatewayV2HTTPRequest{
		"another key": lambdalocal.WebhookEvent("standard", "POST", standard.Headers(body, "msg_forged", now, otherKey), body),
		"stale":       lambdalocal.WebhookEvent("standard", "POST", standard.Headers(body, "msg_stale", now.Add(-6*time.Minute), standardSigningKey), body),
	} {
		if resp, _ := h.Handle(ctx, req); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %d %s, want 401", name, resp.StatusCode, resp.Body)
		}
	}
	if pending, _ := store.Pending(ctx, now.Add(time.Hour), 100); len(pending) != 0 || len(q.Sent()) != 0 {
		t.Fatalf("refused deliveries wrote %d claims and sent %d messages", len(pending), len(q.Sent()))
	}
	// A sender rolling from the symmetric secret to its key signs with both.
	req := lambdalocal.WebhookEvent("standard", "POST", standard.Headers(body, "msg_v1a", now, standardSigningKey), body)
	both := lambdalocal.WebhookEvent("standard", "POST", standard.Headers(body, "msg_both", now, standardSecret, standardSigningKey), body)
	for i, tc := range []struct {
		req  events.APIGatewayV2HTTPRequest
		want string
	}{{req, "accepted"}, {req, "duplicate"}, {both, "accepted"}} {
		resp, _ := h.Handle(ctx, tc.req)
		if resp.StatusCode != http.StatusOK || answer(t, resp) != tc.want {
			t.Fatalf("delivery %d: %d %s, want 200 %s", i+1, resp.StatusCode, resp.Body, tc.want)
		}
	}
	if got := keyStrings(sentKeys(q)); strings.Join(got, " ") != "standard#msg_v1a standard#msg_both" {
		t.Errorf("messages for %v, want one each for msg_v1a and msg_both", got)
	}
}

func sentKeys(q *fakeQueue) []webhook.Key {
	var keys []webhook.Key
	for _, env := range q.Sent() {
		keys = append(keys, env.Key)
	}
	return keys
}

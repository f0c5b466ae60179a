package processor_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestOtherModeIgnoredOnALiveDeployment: a live deployment
// (STRIPE_LIVEMODE=true, ADYEN_LIVE=true) whose receiver accepts a
// test endpoint's secret claims a test-mode checkout and a test Adyen
// payment, so their retries are duplicates, and ends them IGNORED with
// the reason, counted in OtherMode: no access, no email, no invoice, no
// order. A live checkout beside them runs.
func TestOtherModeIgnoredOnALiveDeployment(t *testing.T) {
	p := pipelinetest.NewWith(t, pipelinetest.Options{ProcessorEnv: map[string]string{"STRIPE_LIVEMODE": "true", "ADYEN_LIVE": "true"}})
	at := time.Now().Add(-time.Minute)
	testKey, testBody := pipelinetest.Checkout("mode", 1, at)
	liveKey, liveBody := pipelinetest.Checkout("mode", 2, at, verifytest.WithLivemode(true))
	adyenKey := webhook.Key("adyen#8816178952389001-AUTHORISATION")
	adyen := verifytest.AdyenNotification(pipelinetest.AdyenHMACKey, verifytest.AdyenItem{
		PspReference: "8816178952389001", MerchantAccount: "HookinboxECOM", MerchantReference: "order-mode",
		Value: 2500, Currency: "EUR", EventCode: "AUTHORISATION", Success: true, EventDate: at,
	})
	if !strings.Contains(string(adyen), `"live"`) || strings.Contains(string(adyen), `"live": "true"`) {
		t.Fatalf("the Adyen notification is not a test-mode one: %s", adyen)
	}
	for _, b := range [][]byte{testBody, liveBody} {
		if got := p.Deliver(t, b); got != "accepted" {
			t.Fatalf("delivery: %q, want accepted", got)
		}
	}
	if resp := p.Send(t, lambdalocal.WebhookEvent("adyen", "POST", map[string]string{"content-type": "application/json"}, adyen)); resp.StatusCode != 200 {
		t.Fatalf("adyen: %d %s", resp.StatusCode, resp.Body)
	}
	keys := []webhook.Key{testKey, liveKey, adyenKey}
	p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinal(t, keys) })

	want := map[webhook.Key]inbox.Status{testKey: inbox.Ignored, liveKey: inbox.Done, adyenKey: inbox.Ignored}
	for k, st := range want {
		it, err := p.Inbox.Get(context.Background(), k)
		if err != nil || it.Status != st {
			t.Fatalf("%s: %s, %v; want %s", k, it.Status, err, st)
		}
		if st == inbox.Ignored && !strings.Contains(it.Outcome, "a test-mode event on a live-mode deployment") {
			t.Errorf("%s: outcome %q, want the reason", k, it.Outcome)
		}
	}
	if got := p.Deliver(t, testBody); got != "duplicate" {
		t.Errorf("the test checkout's retry: %q, want duplicate", got)
	}
	if got := len(p.SES.Sent()); got != 1 {
		t.Errorf("emails sent = %d, want 1 (the live checkout's)", got)
	}
	if got := len(p.Stripe.Invoices()); got != 1 {
		t.Errorf("invoices = %d, want 1 (the live checkout's)", got)
	}
	st := p.State(t)
	if len(st.Access) != 1 || st.Access[0].Holder != "cus_mode00002" || len(st.Orders) != 0 {
		t.Errorf("access %+v, orders %+v; want the live customer's access and no order", st.Access, st.Orders)
	}
	for _, provider := range []string{"stripe", "adyen"} {
		if got := emf.Sum(p.Metrics(t), metrics.OtherMode, map[string]string{metrics.DimProvider: provider}, time.Time{}); got != 1 {
			t.Errorf("OtherMode for %s = %v, want 1", provider, got)
		}
	}
}

// TestAdyenModeIsAdyensOwn: beside a test Stripe key (the local stack's),
// Adyen runs in its own mode. With ADYEN_LIVE=true a live Adyen payment
// marks its order paid; with ADYEN_LIVE=false the same payment ends
// IGNORED, counted in OtherMode, which the template alarms on; and with
// ADYEN_LIVE empty (Adyen not set up: the template requires it beside
// Adyen's key) no mode is checked.
func TestAdyenModeIsAdyensOwn(t *testing.T) {
	at := time.Now().Add(-time.Minute)
	for _, tc := range []struct {
		adyenLive string
		want      inbox.Status
		otherMode float64
	}{
		{"true", inbox.Done, 0},
		{"false", inbox.Ignored, 1},
		{"", inbox.Done, 0},
	} {
		t.Run("ADYEN_LIVE="+tc.adyenLive, func(t *testing.T) {
			p := pipelinetest.NewWith(t, pipelinetest.Options{ProcessorEnv: map[string]string{"ADYEN_LIVE": tc.adyenLive}})
			key := webhook.Key("adyen#8816178952389101-AUTHORISATION")
			live := bytes.Replace(verifytest.AdyenNotification(pipelinetest.AdyenHMACKey, verifytest.AdyenItem{
				PspReference: "8816178952389101", MerchantAccount: "HookinboxECOM", MerchantReference: "order-own-mode",
				Value: 2500, Currency: "EUR", EventCode: "AUTHORISATION", Success: true, EventDate: at,
			}), []byte(`"live": "false"`), []byte(`"live": "true"`), 1) // live is not signed
			if !bytes.Contains(live, []byte(`"live": "true"`)) {
				t.Fatalf("not a live notification: %s", live)
			}
			if resp := p.Send(t, lambdalocal.WebhookEvent("adyen", "POST", map[string]string{"content-type": "application/json"}, live)); resp.StatusCode != 200 {
				t.Fatalf("adyen: %d %s", resp.StatusCode, resp.Body)
			}
			p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{key}) })
			if it, err := p.Inbox.Get(context.Background(), key); err != nil || it.Status != tc.want {
				t.Fatalf("%s: %s (%s), %v; want %s", key, it.Status, it.Outcome, err, tc.want)
			}
			if orders := p.State(t).Orders; (tc.want == inbox.Done) != (len(orders) == 1) {
				t.Errorf("orders %+v; want the order paid only when the payment ran", orders)
			}
			if got := emf.Sum(p.Metrics(t), metrics.OtherMode, map[string]string{metrics.DimProvider: "adyen"}, time.Time{}); got != tc.otherMode {
				t.Errorf("OtherMode for adyen = %v, want %v", got, tc.otherMode)
			}
		})
	}
}

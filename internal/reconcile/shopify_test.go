package reconcile_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/shopify"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// orderSink is a destination endpoint: it counts the deliveries of each
// webhook-id, and answers 200.
type orderSink struct {
	mu  sync.Mutex
	got map[string]int
	url string
}

func newOrderSink(t *testing.T) *orderSink {
	t.Helper()
	s := &orderSink{got: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.got[r.Header.Get("webhook-id")]++
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *orderSink) deliveries() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.got)
}

// Two orders were paid 20 minutes ago: the webhook of one was lost, the
// other's orders/paid came and was applied, and delivered to a
// destination (and its body, resent under another event id, is a
// duplicate). One run of the reconciler lists both and claims only the
// lost one, counted missed: the order whose webhook came is its claim,
// keyed by the order. The business applies each once, the destination
// gets each paid order once, and a second run hands on nothing.
func TestShopifyPaidOrdersWhoseWebhookWasLostAreAppliedOnce(t *testing.T) {
	ctx := context.Background()
	sink := newOrderSink(t)
	const secretARN = "arn:aws:secretsmanager:eu-west-1:000000000000:secret:orders"
	dests, _ := json.Marshal([]destination.Config{{Name: "orders", URL: sink.url, Events: []string{"shopify:orders/paid"}, Secret: secretARN}})
	s := pipelinetest.NewWith(t, pipelinetest.Options{ProcessorEnv: map[string]string{
		"DESTINATIONS": string(dests), "DESTINATION_SECRETS": `{"` + secretARN + `":"whsec_` + base64.StdEncoding.EncodeToString([]byte("orders sink secret, 32 bytes....")) + `"}`,
	}})
	paidAt := time.Now().Add(-20 * time.Minute).UTC().Truncate(time.Second)
	lost := standin.ShopifyOrder{ID: 820982911946154501, UpdatedAt: paidAt, Financial: "PAID", TotalPrice: "49.00", Currency: "EUR",
		CustomerID: 115310627314723001, LineItems: []standin.ShopifyLineItem{{SKU: "MUG-RED", VariantID: 808950001, Quantity: 2}}}
	came := standin.ShopifyOrder{ID: 820982911946154502, UpdatedAt: paidAt.Add(time.Minute), Financial: "PAID", TotalPrice: "20.00", Currency: "EUR",
		CustomerID: 115310627314723002, LineItems: []standin.ShopifyLineItem{{SKU: "TEE-S", VariantID: 808950002, Quantity: 1}}}
	pending := standin.ShopifyOrder{ID: 820982911946154503, UpdatedAt: paidAt, Financial: "PENDING", TotalPrice: "5.00", Currency: "EUR",
		LineItems: []standin.ShopifyLineItem{{SKU: "PIN", VariantID: 808950003, Quantity: 1}}}
	for _, o := range []standin.ShopifyOrder{lost, came, pending} {
		s.Shopify.SetOrder(o)
	}
	keys := []webhook.Key{webhook.NewKey("shopify", fmt.Sprintf("order-%d-paid", lost.ID)), webhook.NewKey("shopify", fmt.Sprintf("order-%d-paid", came.ID))}
	body := fmt.Appendf(nil, `{"id":%d,"financial_status":"paid","total_price":"20.00","currency":"EUR","customer":{"id":%d},"line_items":[{"sku":"TEE-S","variant_id":808950002,"quantity":1}]}`,
		came.ID, came.CustomerID)
	req := lambdalocal.WebhookEvent("shopify", "POST", shopify.Headers(body, pipelinetest.ShopifySecret, "b7e3a1c2-0001", "orders/paid", came.UpdatedAt), body)
	if resp := s.Send(t, req); resp.StatusCode != 200 || !strings.Contains(resp.Body, "accepted") {
		t.Fatalf("orders/paid: %d %s", resp.StatusCode, resp.Body)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, keys[1:], inbox.Done) })
	// The same signed body captured and sent again under another event
	// and webhook id is the order's claim again.
	resent := shopify.Headers(body, pipelinetest.ShopifySecret, "b7e3a1c2-0002", "orders/paid", came.UpdatedAt)
	resent["x-shopify-webhook-id"] = "b7e3a1c2-0003"
	if resp := s.Send(t, lambdalocal.WebhookEvent("shopify", "POST", resent, body)); resp.StatusCode != 200 || !strings.Contains(resp.Body, "duplicate") {
		t.Fatalf("the order's body under another event id: %d %s, want duplicate", resp.StatusCode, resp.Body)
	}

	run := reconciler(t, s, map[string]string{"SHOPIFY_SHOP_DOMAIN": "hookinbox-dev.myshopify.com", "SHOPIFY_RECONCILE_LOOKBACK": "1h"})
	sum, err := run(ctx)
	if err != nil {
		t.Fatalf("reconciler: %v\n%+v", err, sum)
	}
	if diff := cmp.Diff(map[webhook.Key]int{keys[0]: 1}, queued(t, s)); diff != "" {
		t.Errorf("enqueued (-want +got):\n%s", diff)
	}
	if sh := providerRun(t, sum, "shopify"); sh.Listed != 2 || sh.Missed != 1 || sh.Errors != 0 {
		t.Errorf("shopify source: %+v, want the 2 paid orders listed, the lost one missed", sh)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, keys, inbox.Done) })
	st := s.State(t)
	wantStock := []shop.Level{{ID: "MUG-RED", Amount: -2}, {ID: "TEE-S", Amount: -1}}
	if diff := cmp.Diff(wantStock, st.Stock); diff != "" {
		t.Errorf("stock (-want +got):\n%s", diff)
	}
	wantPoints := []shop.Level{{ID: "115310627314723001", Amount: 49}, {ID: "115310627314723002", Amount: 20}}
	if diff := cmp.Diff(wantPoints, st.Loyalty); diff != "" {
		t.Errorf("loyalty points (-want +got):\n%s", diff)
	}
	want := map[string]int{destination.WebhookID(keys[0], "orders"): 1, destination.WebhookID(keys[1], "orders"): 1}
	if diff := cmp.Diff(want, sink.deliveries()); diff != "" {
		t.Errorf("the destination's deliveries by webhook-id (-want +got):\n%s", diff)
	}

	again, err := run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sh := providerRun(t, again, "shopify"); sh.Missed != 0 {
		t.Errorf("second run: %+v, want nothing", sh)
	}
	if got := queued(t, s); len(got) != 0 {
		t.Errorf("events queue after the second run: %v", got)
	}
}

// TestAShopsErasureReachesTheOrdersTheReconcilerClaimed: a paid order
// whose webhook was lost is claimed by the reconciler from the shop's
// Admin API. It is that shop's event: the shop's shop/redact erases it,
// and so does a customers/redact of its customer from that shop (which
// touches only the shop's events).
func TestAShopsErasureReachesTheOrdersTheReconcilerClaimed(t *testing.T) {
	ctx := context.Background()
	const domain = "hookinbox-dev.myshopify.com"
	paidAt := time.Now().Add(-20 * time.Minute).UTC().Truncate(time.Second)
	for _, tc := range []struct {
		name string
		req  privacy.Request
	}{
		{"shop/redact", privacy.Request{Subjects: []provider.Subject{shopify.ShopSubject(domain)}}},
		{"customers/redact", privacy.Request{Subjects: []provider.Subject{provider.CustomerSubject(shopify.Name, "115310627314723777")},
			Within: privacy.Within{Provider: shopify.Name, Account: shopify.ShopSubject(domain)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := pipelinetest.New(t)
			lost := standin.ShopifyOrder{ID: 820982911946154777, UpdatedAt: paidAt, Financial: "PAID", TotalPrice: "49.00", Currency: "EUR",
				CustomerID: 115310627314723777, LineItems: []standin.ShopifyLineItem{{SKU: "MUG-RED", VariantID: 808950001, Quantity: 2}}}
			s.Shopify.SetOrder(lost)
			key := webhook.NewKey("shopify", fmt.Sprintf("order-%d-paid", lost.ID))
			run := reconciler(t, s, map[string]string{"SHOPIFY_SHOP_DOMAIN": domain, "SHOPIFY_RECONCILE_LOOKBACK": "1h"})
			if _, err := run(ctx); err != nil {
				t.Fatalf("reconciler: %v", err)
			}
			s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, []webhook.Key{key}, inbox.Done) })
			e := privacy.NewEraser(s.Inbox, privacy.NewHasher(privacy.Keys{pipeline.SubjectKey}), nil)
			tc.req.By = "test"
			if _, err := e.Erase(ctx, tc.req); err != nil {
				t.Fatal(err)
			}
			if it, err := s.Inbox.Get(ctx, key); err != nil || it.PayloadRemoved != inbox.RemovedErased {
				t.Errorf("the order the reconciler claimed, after the shop's %s: removed %q, %v; want erased", tc.name, it.PayloadRemoved, err)
			}
		})
	}
}

package reconcile_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/provider/shopify"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/webhook"
)

// Two orders were paid 20 minutes ago: the webhook of one was lost, the
// other's orders/paid came and was applied. One run hands both to the
// business as paid orders: the lost one is applied once, the other not
// again; a second run hands on nothing.
func TestShopifyPaidOrdersWhoseWebhookWasLostAreAppliedOnce(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
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
	body := fmt.Appendf(nil, `{"id":%d,"financial_status":"paid","total_price":"20.00","currency":"EUR","customer":{"id":%d},"line_items":[{"sku":"TEE-S","variant_id":808950002,"quantity":1}]}`,
		came.ID, came.CustomerID)
	webhookKey := webhook.NewKey("shopify", "b7e3a1c2-0001")
	req := lambdalocal.WebhookEvent("shopify", "POST", shopify.Headers(body, pipelinetest.ShopifySecret, webhookKey.EventID(), "orders/paid", came.UpdatedAt), body)
	if resp := s.Send(t, req); resp.StatusCode != 200 {
		t.Fatalf("orders/paid: %d %s", resp.StatusCode, resp.Body)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllFinal(t, []webhook.Key{webhookKey}) })

	run := reconciler(t, s, map[string]string{"SHOPIFY_SHOP_DOMAIN": "hookinbox-dev.myshopify.com", "SHOPIFY_RECONCILE_LOOKBACK": "1h"})
	sum, err := run(ctx)
	if err != nil {
		t.Fatalf("reconciler: %v\n%+v", err, sum)
	}
	keys := []webhook.Key{webhook.NewKey("shopify", fmt.Sprintf("order-%d-paid", lost.ID)), webhook.NewKey("shopify", fmt.Sprintf("order-%d-paid", came.ID))}
	if diff := cmp.Diff(map[webhook.Key]int{keys[0]: 1, keys[1]: 1}, queued(t, s)); diff != "" {
		t.Errorf("enqueued (-want +got):\n%s", diff)
	}
	// Neither counts as missed (the alarm would fire on every order):
	// whether a webhook came is not known.
	if sh := providerRun(t, sum, "shopify"); sh.Listed != 2 || sh.FromAPI != 2 || sh.Missed != 0 || sh.Errors != 0 {
		t.Errorf("shopify source: %+v, want the 2 paid orders listed and claimed from the API, none counted missed", sh)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllFinal(t, keys) })
	st := s.State(t)
	wantStock := []shop.Level{{ID: "MUG-RED", Amount: -2}, {ID: "TEE-S", Amount: -1}}
	if diff := cmp.Diff(wantStock, st.Stock); diff != "" {
		t.Errorf("stock (-want +got):\n%s", diff)
	}
	wantPoints := []shop.Level{{ID: "115310627314723001", Amount: 49}, {ID: "115310627314723002", Amount: 20}}
	if diff := cmp.Diff(wantPoints, st.Loyalty); diff != "" {
		t.Errorf("loyalty points (-want +got):\n%s", diff)
	}

	again, err := run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sh := providerRun(t, again, "shopify"); sh.Missed != 0 || sh.FromAPI != 0 {
		t.Errorf("second run: %+v, want nothing", sh)
	}
	if got := queued(t, s); len(got) != 0 {
		t.Errorf("events queue after the second run: %v", got)
	}
}

package reconcilerfn

import (
	"context"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/builtin"
	"github.com/hookinbox/hookinbox/provider/shopify"
	"github.com/hookinbox/hookinbox/provider/stripe"
)

func sources(t *testing.T, kv map[string]string) ([]reconcile.Source, error) {
	t.Helper()
	reg, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"INBOX_TABLE": "t", "EVENTS_QUEUE_URL": "q"}
	for k, v := range kv {
		base[k] = v
	}
	return Sources(context.Background(), &provider.Env{Getenv: func(k string) string { return base[k] }}, reg)
}

// Every source is off unless configured; an inbox alone is enough.
func TestEverySourceIsOffUnlessConfigured(t *testing.T) {
	got, err := sources(t, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("sources with an empty environment: %+v, %v", got, err)
	}
}

// A source half configured is refused at start, naming what is missing.
func TestSourcesHalfConfiguredAreRefused(t *testing.T) {
	_, err := sources(t, map[string]string{
		"STRIPE_API_KEY":         "sk_test_1",
		"GITHUB_RECONCILE_HOOKS": "repos/acme/shop/hooks/1,acme/shop",
		"SHOPIFY_SHOP_DOMAIN":    "https://x.myshopify.com",
		"GOPAY_CLIENT_SECRET":    "s",
		"GOPAY_RECONCILE_BUDGET": "5000",
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"STRIPE_EVENT_TYPES is empty", `"acme/shop" is not repos/`, "GITHUB_TOKEN and GITHUB_TOKEN_ARN are empty",
		"SHOPIFY_SHOP_DOMAIN=", "SHOPIFY_ADMIN_TOKEN and SHOPIFY_ADMIN_TOKEN_ARN are empty", "GOPAY_CLIENT_ID is empty", "GOPAY_RECONCILE_BUDGET=5000"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}

// The Shopify endpoint defaults to the shop's own at the pinned version.
func TestShopifyURLDefaultsToTheShops(t *testing.T) {
	got, err := sources(t, map[string]string{"SHOPIFY_SHOP_DOMAIN": "acme.myshopify.com", "SHOPIFY_ADMIN_TOKEN": "shpat_1",
		"STRIPE_API_KEY": "sk_test_1", "STRIPE_EVENT_TYPES": "invoice.paid, charge.refunded"})
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range got {
		switch l := src.List.(type) {
		case *shopify.ShopifyOrders:
			if want := "https://acme.myshopify.com/admin/api/" + shopify.APIVersion + "/graphql.json"; l.URL != want {
				t.Errorf("SHOPIFY_API_URL = %q, want %q", l.URL, want)
			}
		case *stripe.Events:
			if got := strings.Join(l.Types, ","); got != "invoice.paid,charge.refunded" {
				t.Errorf("STRIPE_EVENT_TYPES = %q", got)
			}
		}
	}
	if len(got) != 2 {
		t.Errorf("%d sources, want Stripe and Shopify", len(got))
	}
}

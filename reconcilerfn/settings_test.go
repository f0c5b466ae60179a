package reconcilerfn

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/provider"
)

func sourcesOf(t *testing.T, kv map[string]string) ([]reconcile.Source, error) {
	t.Helper()
	reg, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"INBOX_TABLE": "t", "EVENTS_QUEUE_URL": "q"}
	for k, v := range kv {
		base[k] = v
	}
	return sources(context.Background(), &provider.Env{Getenv: func(k string) string { return base[k] }}, reg)
}

// Every source is off unless configured; an inbox alone is enough.
func TestEverySourceIsOffUnlessConfigured(t *testing.T) {
	got, err := sourcesOf(t, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("sources with an empty environment: %+v, %v", got, err)
	}
}

// A source half configured is refused at start, naming what is missing.
func TestSourcesHalfConfiguredAreRefused(t *testing.T) {
	_, err := sourcesOf(t, map[string]string{
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

// The Stripe source lists the types STRIPE_EVENT_TYPES names; Shopify's
// is on (its endpoint: internal/providers/shopify's tests).
func TestStripeTypesAndShopify(t *testing.T) {
	got, err := sourcesOf(t, map[string]string{"SHOPIFY_SHOP_DOMAIN": "acme.myshopify.com", "SHOPIFY_ADMIN_TOKEN": "shpat_1",
		"STRIPE_API_KEY": "sk_test_1", "STRIPE_EVENT_TYPES": "invoice.paid, charge.refunded"})
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range got {
		switch l := src.List.(type) {
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

// The GitHub and Shopify sources' first run looks back an hour unless
// told otherwise; 0s starts from the first run, and GitHub's window is at
// most the 3 days it keeps deliveries.
func TestSourceLookbacks(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		env                    map[string]string
		wantGitHub, wantShopfy time.Duration
		wantErr                string
	}{
		{name: "defaults", wantGitHub: time.Hour, wantShopfy: time.Hour},
		{name: "empty as the template passes it", env: map[string]string{"GITHUB_RECONCILE_LOOKBACK": "", "SHOPIFY_RECONCILE_LOOKBACK": ""},
			wantGitHub: time.Hour, wantShopfy: time.Hour},
		{name: "from the first run", env: map[string]string{"GITHUB_RECONCILE_LOOKBACK": "0s", "SHOPIFY_RECONCILE_LOOKBACK": "0"}},
		{name: "all GitHub keeps", env: map[string]string{"GITHUB_RECONCILE_LOOKBACK": "72h", "SHOPIFY_RECONCILE_LOOKBACK": "240h"},
			wantGitHub: 72 * time.Hour, wantShopfy: 240 * time.Hour},
		{name: "longer than GitHub keeps", env: map[string]string{"GITHUB_RECONCILE_LOOKBACK": "73h"}, wantErr: "longer than the 3 days"},
		{name: "negative", env: map[string]string{"SHOPIFY_RECONCILE_LOOKBACK": "-1h"}, wantErr: "SHOPIFY_RECONCILE_LOOKBACK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"GITHUB_RECONCILE_HOOKS": "repos/acme/shop/hooks/1", "GITHUB_TOKEN": "ghp_1",
				"SHOPIFY_SHOP_DOMAIN": "acme.myshopify.com", "SHOPIFY_ADMIN_TOKEN": "shpat_1"}
			maps.Copy(env, tc.env)
			got, err := sourcesOf(t, env)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("sources: %v, want an error saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lookbacks := map[string]time.Duration{}
			for _, src := range got {
				lookbacks[src.Provider] = src.Lookback
			}
			if lookbacks["github"] != tc.wantGitHub || lookbacks["shopify"] != tc.wantShopfy {
				t.Errorf("lookbacks GitHub %s Shopify %s, want %s and %s", lookbacks["github"], lookbacks["shopify"], tc.wantGitHub, tc.wantShopfy)
			}
		})
	}
}

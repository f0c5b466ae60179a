package shopify

import (
	"context"
	"regexp"
	"time"

	"github.com/hookinbox/hookinbox/provider"
)

// Provider is Shopify: webhooks signed in X-Shopify-Hmac-Sha256
// (verifier), and the shop's orders as the reconciler's source.
type Provider struct{ provider.NoFetch }

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Webhook implements provider.Provider.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{SecretEnv: "SHOPIFY_WEBHOOK_SECRET", TypeUnsigned: true, Subjects: subjects, PrivacyRequest: privacyRequest}
}

// minSecretLen is the shortest secret the verifier accepts: Shopify's are
// 32 characters or more (hex, or shpss_ and hex).
const minSecretLen = 32

// Verifier implements provider.Provider.
func (Provider) Verifier(secrets []string, _ *provider.Env) (provider.Verifier, error) {
	return &verifier{Secrets: secrets}, provider.CheckSecretLen(Name, secrets, minSecretLen)
}

// defaultLookback is the first run's window: the minutes between a
// deployment and its first run, and a token fixed within the hour. Beside
// an older system that handled the same shop, a longer window runs its
// work here again.
const defaultLookback = time.Hour

// shopDomain is the form of SHOPIFY_SHOP_DOMAIN.
var shopDomain = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*(\.[A-Za-z0-9-]+)+$`)

// Reconciler implements provider.Provider: with SHOPIFY_SHOP_DOMAIN set
// (<shop>.myshopify.com), the shop's paid orders, read with
// SHOPIFY_ADMIN_TOKEN (or its _ARN) from SHOPIFY_API_URL (default the
// shop's Admin GraphQL endpoint), the first run going back
// SHOPIFY_RECONCILE_LOOKBACK (default 1h; 0s:
// from the first run). Each order is keyed as its orders/paid webhook.
func (Provider) Reconciler(ctx context.Context, env *provider.Env) (provider.Source, error) {
	r := env.Settings()
	domain := r.String("SHOPIFY_SHOP_DOMAIN", "")
	apiURL := r.String("SHOPIFY_API_URL", "")
	lookback := r.Window("SHOPIFY_RECONCILE_LOOKBACK", defaultLookback)
	if domain == "" {
		return provider.Source{}, r.Err()
	}
	if !shopDomain.MatchString(domain) {
		r.Problem("SHOPIFY_SHOP_DOMAIN=%q is not a shop's domain such as example.myshopify.com", domain)
	}
	if !env.HasSecret("SHOPIFY_ADMIN_TOKEN") {
		r.Problem("SHOPIFY_SHOP_DOMAIN is set but SHOPIFY_ADMIN_TOKEN and SHOPIFY_ADMIN_TOKEN_ARN are empty (an Admin API token with read_orders)")
	}
	if err := r.Err(); err != nil {
		return provider.Source{}, err
	}
	if apiURL == "" {
		apiURL = adminURL(domain)
	}
	token, err := env.Secret(ctx, "SHOPIFY_ADMIN_TOKEN")
	if err != nil {
		return provider.Source{}, err
	}
	return provider.Source{Lookback: lookback,
		List: &orders{URL: apiURL, Shop: domain, Token: token, HTTP: env.HTTPClient()}}, nil
}

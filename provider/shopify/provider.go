package shopify

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Provider is Shopify: webhooks signed in X-Shopify-Hmac-Sha256
// (Verifier), and the shop's orders as the reconciler's source.
type Provider struct{ provider.NoFetch }

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Webhook implements provider.Provider.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{
		SendHelp: sendHelp, SendExamples: sendExamples,
		SecretEnv: "SHOPIFY_WEBHOOK_SECRET", TypeUnsigned: true,
		Variants: []provider.Variant{{Name: "unprefixed", Usage: "shopify: name the headers without X- (Shopify-Hmac-Sha256, ...)"}},
	}
}

// minSecretLen is the shortest secret the verifier accepts: Shopify's are
// 32 characters or more (hex, or shpss_ and hex).
const minSecretLen = 32

// Verifier implements provider.Provider.
func (Provider) Verifier(secrets []string, _ *provider.Env) (provider.Verifier, error) {
	return &Verifier{Secrets: secrets}, provider.CheckSecretLen(Name, secrets, minSecretLen)
}

// Sign implements provider.Provider: ev.Body under the first secret, the
// topic ev.Type or the file's name with / for its first _ (orders_paid:
// orders/paid), a fresh event id unless ev.ID; variant "unprefixed" names
// the headers without X-.
func (Provider) Sign(ev provider.TestEvent, secrets []string, at time.Time) (webhook.Request, error) {
	secret, err := provider.FirstSecret(Name, secrets)
	if err != nil {
		return webhook.Request{}, err
	}
	topic := topic(ev)
	if topic == "" {
		return webhook.Request{}, fmt.Errorf("shopify: no topic")
	}
	id := ev.ID
	if id == "" {
		id = provider.UUID()
	}
	h := Headers(ev.Body, secret, id, topic, at)
	if ev.Variant == "unprefixed" {
		h = Unprefixed(h)
	}
	return webhook.Request{Method: "POST", Header: h, Body: ev.Body}, nil
}

// shopDomain is the form of SHOPIFY_SHOP_DOMAIN.
var shopDomain = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*(\.[A-Za-z0-9-]+)+$`)

// Reconciler implements provider.Provider: with SHOPIFY_SHOP_DOMAIN set
// (<shop>.myshopify.com), the shop's paid orders, read with
// SHOPIFY_ADMIN_TOKEN (or its _ARN) from SHOPIFY_API_URL (default the
// shop's Admin GraphQL endpoint), the first run going back
// SHOPIFY_RECONCILE_LOOKBACK (default provider.DefaultSourceLookback; 0s:
// from the first run). Each order is keyed as its orders/paid webhook.
func (Provider) Reconciler(ctx context.Context, env *provider.Env) (provider.Source, error) {
	r := env.Reader()
	domain := r.String("SHOPIFY_SHOP_DOMAIN", "")
	apiURL := r.String("SHOPIFY_API_URL", "")
	lookback := r.Window("SHOPIFY_RECONCILE_LOOKBACK", provider.DefaultSourceLookback)
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
		List: &ShopifyOrders{URL: apiURL, Shop: domain, Token: token, HTTP: env.HTTPClient()}}, nil
}

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `X-Shopify-Hmac-Sha256 (base64 HMAC of the body); the topic is
--type or the file's name with _ for / (orders_paid: orders/paid);
a payload name gets a fresh order ID; a fresh X-Shopify-Event-Id
unless --id; --unprefixed names the headers without X-
(Shopify-Hmac-Sha256, ...), as Shopify's newer deliveries do`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send shopify orders/paid --times 2",
	"hookinbox send shopify my-order.json --type orders/paid",
}

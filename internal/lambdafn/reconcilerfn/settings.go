package reconcilerfn

import (
	"regexp"
	"time"

	"github.com/hookinbox/hookinbox/internal/gopayapi"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/stripeapi"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/reconcile"
)

// MaxLookback is the longest STRIPE_EVENTS_LOOKBACK: Stripe lists 30 days
// of events.
const MaxLookback = 30 * 24 * time.Hour

// MaxGitHubLookback is the longest GITHUB_RECONCILE_LOOKBACK: GitHub keeps
// a hook's deliveries for 3 days.
const MaxGitHubLookback = 72 * time.Hour

// DefaultSourceLookback is the first run's window of the GitHub and
// Shopify sources: the minutes between a deployment and its first run, and
// a token fixed within the hour. Beside an older system that handled the
// same hook or shop, a longer window runs its work here again.
const DefaultSourceLookback = time.Hour

// gitHubHook is the form of a GITHUB_RECONCILE_HOOKS entry.
var gitHubHook = regexp.MustCompile(`^(repos/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+|orgs/[A-Za-z0-9_.-]+)/hooks/[0-9]+$`)

// shopifyDomain is the form of SHOPIFY_SHOP_DOMAIN.
var shopifyDomain = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*(\.[A-Za-z0-9-]+)+$`)

// Settings is the reconciler function's environment, as template.yaml sets it.
type Settings struct {
	lambdafn.Inbox
	StripeAPIKey    []string // STRIPE_API_KEY; used as is when set
	StripeAPIKeyARN string   // STRIPE_API_KEY_ARN, read when STRIPE_API_KEY is empty
	StripeAPIURL    string   // STRIPE_API_URL, default Stripe's
	// StripeEventTypes are the Stripe event types the deployed business
	// handles (STRIPE_EVENT_TYPES, comma-separated; the template fills it
	// from its StripeEventTypes parameter): only those are listed.
	StripeEventTypes []string
	StuckAfter       time.Duration // STUCK_AFTER, default 15m
	Lookback         time.Duration // STRIPE_EVENTS_LOOKBACK, default none: the first run starts from now

	// GitHubHooks are the hooks whose deliveries are reconciled
	// (GITHUB_RECONCILE_HOOKS, comma-separated API paths such as
	// repos/<owner>/<repo>/hooks/<id>); none turns the GitHub source off.
	GitHubHooks    []string
	GitHubToken    []string      // GITHUB_TOKEN; used as is when set
	GitHubTokenARN string        // GITHUB_TOKEN_ARN, read when GITHUB_TOKEN is empty
	GitHubAPIURL   string        // GITHUB_API_URL, default https://api.github.com
	GitHubLookback time.Duration // GITHUB_RECONCILE_LOOKBACK, default DefaultSourceLookback, at most 72h; 0s: from the first run

	// Shopify: on when SHOPIFY_SHOP_DOMAIN is set.
	ShopifyDomain   string        // SHOPIFY_SHOP_DOMAIN, <shop>.myshopify.com
	ShopifyToken    []string      // SHOPIFY_ADMIN_TOKEN; used as is when set
	ShopifyTokenARN string        // SHOPIFY_ADMIN_TOKEN_ARN, read when SHOPIFY_ADMIN_TOKEN is empty
	ShopifyAPIURL   string        // SHOPIFY_API_URL, default the shop's Admin GraphQL endpoint (reconcile.ShopifyAdminURL)
	ShopifyLookback time.Duration // SHOPIFY_RECONCILE_LOOKBACK, default DefaultSourceLookback; 0s: from the first run

	// GoPay: on when GOPAY_CLIENT_SECRET or GOPAY_CLIENT_SECRET_ARN is set
	// (the processor's credentials).
	GoPayClientID  string        // GOPAY_CLIENT_ID
	GoPaySecret    []string      // GOPAY_CLIENT_SECRET; used as is when set
	GoPaySecretARN string        // GOPAY_CLIENT_SECRET_ARN, read when GOPAY_CLIENT_SECRET is empty
	GoPayAPIURL    string        // GOPAY_API_URL, default GoPay's production API
	GoPayBudget    int           // GOPAY_RECONCILE_BUDGET: payments fetched a run, default 50
	GoPayMaxAge    time.Duration // GOPAY_RECONCILE_MAX_AGE: how long a payment is watched, default 168h
}

// LoadSettings reads the settings through getenv, reporting every missing
// or invalid key in one error.
func LoadSettings(getenv func(string) string) (Settings, error) {
	r := envconfig.New(getenv)
	s := Settings{
		Inbox:            lambdafn.ReadInbox(r),
		StripeAPIKey:     r.List("STRIPE_API_KEY"),
		StripeAPIKeyARN:  r.String("STRIPE_API_KEY_ARN", ""),
		StripeAPIURL:     r.String("STRIPE_API_URL", stripeapi.DefaultURL),
		StuckAfter:       r.Duration("STUCK_AFTER", 15*time.Minute),
		Lookback:         r.Duration("STRIPE_EVENTS_LOOKBACK", 0),
		StripeEventTypes: r.List("STRIPE_EVENT_TYPES"),
		GitHubHooks:      r.List("GITHUB_RECONCILE_HOOKS"),
		GitHubToken:      r.List("GITHUB_TOKEN"),
		GitHubTokenARN:   r.String("GITHUB_TOKEN_ARN", ""),
		GitHubAPIURL:     r.String("GITHUB_API_URL", reconcile.DefaultGitHubAPIURL),
		GitHubLookback:   r.Window("GITHUB_RECONCILE_LOOKBACK", DefaultSourceLookback),
		ShopifyDomain:    r.String("SHOPIFY_SHOP_DOMAIN", ""),
		ShopifyToken:     r.List("SHOPIFY_ADMIN_TOKEN"),
		ShopifyTokenARN:  r.String("SHOPIFY_ADMIN_TOKEN_ARN", ""),
		ShopifyAPIURL:    r.String("SHOPIFY_API_URL", ""),
		ShopifyLookback:  r.Window("SHOPIFY_RECONCILE_LOOKBACK", DefaultSourceLookback),
		GoPayClientID:    r.String("GOPAY_CLIENT_ID", ""),
		GoPaySecret:      r.List("GOPAY_CLIENT_SECRET"),
		GoPaySecretARN:   r.String("GOPAY_CLIENT_SECRET_ARN", ""),
		GoPayAPIURL:      r.String("GOPAY_API_URL", gopayapi.DefaultURL),
		GoPayBudget:      int(r.Int("GOPAY_RECONCILE_BUDGET", 50)),
		GoPayMaxAge:      r.Duration("GOPAY_RECONCILE_MAX_AGE", 7*24*time.Hour),
	}
	if s.ShopifyDomain != "" {
		if !shopifyDomain.MatchString(s.ShopifyDomain) {
			r.Problem("SHOPIFY_SHOP_DOMAIN=%q is not a shop's domain such as example.myshopify.com", s.ShopifyDomain)
		}
		if len(s.ShopifyToken) == 0 && s.ShopifyTokenARN == "" {
			r.Problem("SHOPIFY_SHOP_DOMAIN is set but SHOPIFY_ADMIN_TOKEN and SHOPIFY_ADMIN_TOKEN_ARN are empty (an Admin API token with read_orders)")
		}
		if s.ShopifyAPIURL == "" {
			s.ShopifyAPIURL = reconcile.ShopifyAdminURL(s.ShopifyDomain)
		}
	}
	if s.GoPayEnabled() && s.GoPayClientID == "" {
		r.Problem("GoPay is enabled (GOPAY_CLIENT_SECRET or GOPAY_CLIENT_SECRET_ARN is set) but GOPAY_CLIENT_ID is empty")
	}
	if s.GoPayMaxAge > reconcile.GoPayWatchTTL {
		r.Problem("GOPAY_RECONCILE_MAX_AGE=%s is longer than the %s a watched payment is kept", s.GoPayMaxAge, reconcile.GoPayWatchTTL)
	}
	if s.GoPayBudget < 1 || s.GoPayBudget > 1000 {
		r.Problem("GOPAY_RECONCILE_BUDGET=%d: want 1 to 1000 payments a run", s.GoPayBudget)
	}
	for _, hook := range s.GitHubHooks {
		if !gitHubHook.MatchString(hook) {
			r.Problem("GITHUB_RECONCILE_HOOKS: %q is not repos/<owner>/<repo>/hooks/<id> or orgs/<org>/hooks/<id>", hook)
		}
	}
	if len(s.GitHubHooks) > 0 && len(s.GitHubToken) == 0 && s.GitHubTokenARN == "" {
		r.Problem("GITHUB_RECONCILE_HOOKS is set but GITHUB_TOKEN and GITHUB_TOKEN_ARN are empty (a token that may read the hooks' deliveries)")
	}
	if s.GitHubLookback > MaxGitHubLookback {
		r.Problem("GITHUB_RECONCILE_LOOKBACK=%s is longer than the 3 days GitHub keeps deliveries", s.GitHubLookback)
	}
	if s.StripeEnabled() && len(s.StripeEventTypes) == 0 {
		r.Problem("STRIPE_EVENT_TYPES is empty: name the Stripe event types the business handles (comma-separated; a generated template takes them from the business file's EventTypes stripe), or unset STRIPE_API_KEY and STRIPE_API_KEY_ARN to turn the Stripe source off")
	}
	if s.Lookback > MaxLookback {
		r.Problem("STRIPE_EVENTS_LOOKBACK=%s is longer than the 30 days Stripe lists events", s.Lookback)
	}
	return s, r.Err()
}

// StripeEnabled reports whether the Stripe source is on: STRIPE_API_KEY or
// STRIPE_API_KEY_ARN is set.
func (s Settings) StripeEnabled() bool { return len(s.StripeAPIKey) > 0 || s.StripeAPIKeyARN != "" }

// GoPayEnabled reports whether the GoPay source is on: GOPAY_CLIENT_SECRET
// or GOPAY_CLIENT_SECRET_ARN is set.
func (s Settings) GoPayEnabled() bool { return len(s.GoPaySecret) > 0 || s.GoPaySecretARN != "" }

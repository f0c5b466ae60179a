package reconcilerfn

import (
	"time"

	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/stripeapi"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
)

// MaxLookback is the longest STRIPE_EVENTS_LOOKBACK: Stripe lists 30 days
// of events.
const MaxLookback = 30 * 24 * time.Hour

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
	}
	if s.StripeEnabled() && len(s.StripeEventTypes) == 0 {
		r.Problem("STRIPE_EVENT_TYPES is empty: name the Stripe event types the business handles (comma-separated), or unset STRIPE_API_KEY and STRIPE_API_KEY_ARN to turn the Stripe source off")
	}
	if s.Lookback > MaxLookback {
		r.Problem("STRIPE_EVENTS_LOOKBACK=%s is longer than the 30 days Stripe lists events", s.Lookback)
	}
	return s, r.Err()
}

// StripeEnabled reports whether the Stripe source is on: STRIPE_API_KEY or
// STRIPE_API_KEY_ARN is set.
func (s Settings) StripeEnabled() bool { return len(s.StripeAPIKey) > 0 || s.StripeAPIKeyARN != "" }

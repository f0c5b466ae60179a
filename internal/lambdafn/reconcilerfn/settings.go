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
	StripeAPIKey    []string      // STRIPE_API_KEY; used as is when set
	StripeAPIKeyARN string        // STRIPE_API_KEY_ARN, read when STRIPE_API_KEY is empty
	StripeAPIURL    string        // STRIPE_API_URL, default Stripe's
	StuckAfter      time.Duration // STUCK_AFTER, default 15m
	Lookback        time.Duration // STRIPE_EVENTS_LOOKBACK, default none: the first run starts from now
}

// LoadSettings reads the settings through getenv, reporting every missing
// or invalid key in one error.
func LoadSettings(getenv func(string) string) (Settings, error) {
	r := envconfig.New(getenv)
	s := Settings{
		Inbox:           lambdafn.ReadInbox(r),
		StripeAPIKey:    r.List("STRIPE_API_KEY"),
		StripeAPIKeyARN: r.String("STRIPE_API_KEY_ARN", ""),
		StripeAPIURL:    r.String("STRIPE_API_URL", stripeapi.DefaultURL),
		StuckAfter:      r.Duration("STUCK_AFTER", 15*time.Minute),
		Lookback:        r.Duration("STRIPE_EVENTS_LOOKBACK", 0),
	}
	if len(s.StripeAPIKey) == 0 && s.StripeAPIKeyARN == "" {
		r.Problem("set STRIPE_API_KEY or STRIPE_API_KEY_ARN (a Secrets Manager secret holding the Stripe secret key; it needs read access to events)")
	}
	if s.Lookback > MaxLookback {
		r.Problem("STRIPE_EVENTS_LOOKBACK=%s is longer than the 30 days Stripe lists events", s.Lookback)
	}
	return s, r.Err()
}

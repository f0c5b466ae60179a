package reconcile

import (
	"time"

	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
)

// DefaultStripeAPIURL is Stripe's API base URL.
const DefaultStripeAPIURL = "https://api.stripe.com"

// MaxLookback is the longest STRIPE_EVENTS_LOOKBACK: Stripe lists 30 days
// of events.
const MaxLookback = 30 * 24 * time.Hour

// Settings is the reconciler function's environment, as template.yaml sets it.
type Settings struct {
	Table           string        // INBOX_TABLE
	QueueURL        string        // EVENTS_QUEUE_URL
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
		Table:           r.Required("INBOX_TABLE"),
		QueueURL:        r.Required("EVENTS_QUEUE_URL"),
		StripeAPIKey:    r.List("STRIPE_API_KEY"),
		StripeAPIKeyARN: r.String("STRIPE_API_KEY_ARN", ""),
		StripeAPIURL:    r.String("STRIPE_API_URL", DefaultStripeAPIURL),
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

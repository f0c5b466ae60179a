package shop

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/internal/shop/stripeapi"
	"github.com/hookinbox/hookinbox/processorfn"
)

// settings is the example shop's part of the processor function's
// environment, as template.yaml sets it.
type settings struct {
	Table           string   // SHOP_TABLE
	MailFrom        string   // MAIL_FROM
	StripeAPIKey    []string // STRIPE_API_KEY; used as is when set
	StripeAPIKeyARN string   // STRIPE_API_KEY_ARN, read when STRIPE_API_KEY is empty
	StripeAPIURL    string   // STRIPE_API_URL, default Stripe's
}

// fromEnv builds the example shop from the processor function's AWS
// config and environment (settings), reporting every missing setting in
// one error.
func fromEnv(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
	r := envconfig.New(getenv)
	s := settings{
		Table:           r.Required("SHOP_TABLE"),
		MailFrom:        r.Required("MAIL_FROM"),
		StripeAPIKey:    r.List("STRIPE_API_KEY"),
		StripeAPIKeyARN: r.String("STRIPE_API_KEY_ARN", ""),
		StripeAPIURL:    r.String("STRIPE_API_URL", "https://api.stripe.com"),
	}
	maxAge := r.Duration("SECRET_MAX_AGE", secrets.DefaultMaxAge)
	reload := r.Duration("SECRET_RELOAD_INTERVAL", secrets.DefaultMinInterval)
	apiKey, err := stripe.KeyFromContext(ctx) // the processor's, when processorfn builds the shop
	if err != nil {
		return nil, err
	}
	if apiKey == nil && len(s.StripeAPIKey) == 0 && s.StripeAPIKeyARN == "" {
		r.Problem("set STRIPE_API_KEY or STRIPE_API_KEY_ARN (the shop creates invoices and reads subscriptions)")
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	c := Config{Table: s.Table, MailFrom: s.MailFrom}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if apiKey == nil {
		if apiKey, err = stripeapi.Key(ctx, cfg, s.StripeAPIKey, s.StripeAPIKeyARN, maxAge, reload); err != nil {
			return nil, err
		}
	}
	billing := newStripeBilling(apiKey, s.StripeAPIURL, stripeapi.HTTPClient())
	return New(c, processorfn.DynamoDB(ctx, cfg), sesv2.NewFromConfig(cfg), billing), nil
}

// Package reconcilerfn builds the scheduled reconciler function from its
// environment.
package reconcilerfn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/internal/gopayapi"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/stripeapi"
	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/webhook"
)

// Build builds the scheduled reconciler: stuck claims and the Stripe
// events that never arrived, claimed through the receiver's own intake.
func Build(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	s, err := LoadSettings(getenv)
	if err != nil {
		return nil, err
	}
	var sources reconcile.Sources
	if s.StripeEnabled() {
		// The key is read again when older than secrets.DefaultMaxAge: a
		// run refused with a rolled key is followed by one with the new key.
		keys, err := stripeapi.Key(ctx, cfg, s.StripeAPIKey, s.StripeAPIKeyARN, 0, 0)
		if err != nil {
			return nil, err
		}
		source := stripeapi.NewEvents(keys, s.StripeAPIURL, stripeapi.HTTPClient())
		// Only the types the business handles are listed: others would be
		// claimed only to be IGNORED.
		source.Types = s.StripeEventTypes
		sources.Lists = append(sources.Lists, source)
	}
	rec, err := lambdafn.Recorder(getenv)
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(cfg)
	store := inbox.NewDynamoDB(awsapi.DynamoDBFromConfig(cfg), s.Table)
	if len(s.GitHubHooks) > 0 {
		token, err := stripeapi.Key(ctx, cfg, s.GitHubToken, s.GitHubTokenARN, 0, 0)
		if err != nil {
			return nil, fmt.Errorf("github token: %w", err)
		}
		sources.Lists = append(sources.Lists, &reconcile.GitHubDeliveries{
			Hooks: s.GitHubHooks, Token: token, BaseURL: s.GitHubAPIURL, HTTP: stripeapi.HTTPClient(),
			Claimed: func(ctx context.Context, key webhook.Key) (bool, error) {
				_, err := store.Get(ctx, key)
				if errors.Is(err, inbox.ErrNotFound) {
					return false, nil
				}
				return err == nil, err
			},
		})
	}
	events := queue.New(awsapi.SQSFromConfig(cfg), s.QueueURL)
	// Events from the API are re-enqueued by the duplicate path after the
	// same wait as stuck claims, and their bytes differ from the webhook's.
	in := intake.New(intake.Config{Grace: s.StuckAfter, FromProviderAPI: true, Metrics: rec}, store, events, log)
	if s.ShopifyDomain != "" {
		token, err := stripeapi.Key(ctx, cfg, s.ShopifyToken, s.ShopifyTokenARN, 0, 0)
		if err != nil {
			return nil, fmt.Errorf("shopify admin token: %w", err)
		}
		sources.Lists = append(sources.Lists, &reconcile.ShopifyOrders{URL: s.ShopifyAPIURL, Token: token, HTTP: stripeapi.HTTPClient()})
	}
	if s.GoPayEnabled() {
		secret, err := stripeapi.Key(ctx, cfg, s.GoPaySecret, s.GoPaySecretARN, 0, 0)
		if err != nil {
			return nil, fmt.Errorf("gopay client secret: %w", err)
		}
		sources.Sweeps = append(sources.Sweeps, &reconcile.GoPaySweep{
			Watch:  &reconcile.GoPayWatch{DB: db, Table: s.Table, MaxAge: s.GoPayMaxAge},
			Fetch:  gopayapi.Payments(s.GoPayClientID, secret, s.GoPayAPIURL, stripeapi.HTTPClient()),
			Budget: s.GoPayBudget,
		})
	}
	h := reconcile.New(
		reconcile.Config{StuckAfter: s.StuckAfter, Lookback: s.Lookback, Metrics: rec,
			Lookbacks: map[string]time.Duration{"github": s.GitHubLookback, "shopify": s.ShopifyLookback}},
		store, events, in, sources,
		reconcile.NewCheckpoints(db, s.Table),
		log,
	)
	return h.Handle, nil
}

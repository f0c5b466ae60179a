package reconcilerfn

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/internal/gopayapi"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn/stripeapi"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/webhook"
)

// buildSources returns the sources the settings configure; each is off
// unless its settings are given. Every secret (API key, token, client
// secret) is read through stripeapi.Key: used as is when set inline, else
// from Secrets Manager, read again when older than 5 minutes.
func buildSources(ctx context.Context, cfg aws.Config, s Settings, claims interface {
	Get(ctx context.Context, key webhook.Key) (inbox.Item, error)
	EndHold(ctx context.Context, key webhook.Key) error
}, db *dynamodb.Client) (reconcile.Sources, error) {
	var src reconcile.Sources
	if s.StripeEnabled() {
		keys, err := stripeapi.Key(ctx, cfg, s.StripeAPIKey, s.StripeAPIKeyARN, 0, 0)
		if err != nil {
			return src, err
		}
		events := stripeapi.NewEvents(keys, s.StripeAPIURL, stripeapi.HTTPClient())
		// Only the types the business handles are listed: others would be
		// claimed only to be IGNORED.
		events.Types = s.StripeEventTypes
		src.Lists = append(src.Lists, events)
	}
	if len(s.GitHubHooks) > 0 {
		token, err := stripeapi.Key(ctx, cfg, s.GitHubToken, s.GitHubTokenARN, 0, 0)
		if err != nil {
			return src, fmt.Errorf("github token: %w", err)
		}
		src.Lists = append(src.Lists, &reconcile.GitHubDeliveries{
			Hooks: s.GitHubHooks, Token: token, BaseURL: s.GitHubAPIURL, HTTP: stripeapi.HTTPClient(), Inbox: claims,
		})
	}
	if s.ShopifyDomain != "" {
		token, err := stripeapi.Key(ctx, cfg, s.ShopifyToken, s.ShopifyTokenARN, 0, 0)
		if err != nil {
			return src, fmt.Errorf("shopify admin token: %w", err)
		}
		src.Lists = append(src.Lists, &reconcile.ShopifyOrders{URL: s.ShopifyAPIURL, Token: token, HTTP: stripeapi.HTTPClient()})
	}
	if s.GoPayEnabled() {
		secret, err := stripeapi.Key(ctx, cfg, s.GoPaySecret, s.GoPaySecretARN, 0, 0)
		if err != nil {
			return src, fmt.Errorf("gopay client secret: %w", err)
		}
		src.Sweeps = append(src.Sweeps, &reconcile.GoPaySweep{
			Watch:  &reconcile.GoPayWatch{DB: db, Table: s.Table, MaxAge: s.GoPayMaxAge},
			Fetch:  gopayapi.Payments(s.GoPayClientID, secret, s.GoPayAPIURL, stripeapi.HTTPClient()),
			Budget: s.GoPayBudget,
			Inbox:  claims,
		})
	}
	return src, nil
}

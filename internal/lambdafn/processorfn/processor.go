// Package processorfn builds the processor function from its environment:
// its settings, clients, the example shop and the handler.
package processorfn

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/stripeapi"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/internal/verify"
)

// Build builds the SQS-triggered processor with the example shop as
// its business.
func Build(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	s, err := processor.LoadSettings(getenv)
	if err != nil {
		return nil, err
	}
	apiKey, err := stripeapi.Key(ctx, cfg, s.StripeAPIKey, s.StripeAPIKeyARN, s.SecretMaxAge, s.SecretReload)
	if err != nil {
		return nil, err
	}
	shopCfg := shop.Config{Table: s.ShopTable, MailFrom: s.MailFrom}
	if err := shopCfg.Validate(); err != nil {
		return nil, err
	}
	rec, err := lambdafn.Recorder(getenv)
	if err != nil {
		return nil, err
	}
	db := dynamodb.NewFromConfig(cfg)
	sq := sqs.NewFromConfig(cfg)
	billing := shop.NewStripeBilling(apiKey, s.StripeAPIURL, stripeapi.HTTPClient())
	fetchers := map[string]processor.Fetcher{
		verify.StripeProvider: processor.StripeEvents(apiKey, s.StripeAPIURL, stripeapi.HTTPClient()),
	}
	fetchAlways := map[string]bool{}
	if s.GoPayEnabled() {
		secret, err := stripeapi.Key(ctx, cfg, s.GoPaySecret, s.GoPaySecretARN, s.SecretMaxAge, s.SecretReload)
		if err != nil {
			return nil, fmt.Errorf("gopay client secret: %w", err)
		}
		fetchers[verify.GoPayProvider] = processor.GoPayPayments(s.GoPayClientID, secret, s.GoPayAPIURL, stripeapi.HTTPClient())
		fetchAlways[verify.GoPayProvider] = true
	}
	h := processor.New(
		processor.Config{
			LeaseFor: s.LeaseFor, Budget: s.Budget, Reserve: s.Reserve, MaxReceiveCount: s.MaxReceiveCount,
			Metrics:  rec,
			Fetchers: fetchers, FetchAlways: fetchAlways,
		},
		inbox.NewDynamoDB(db, s.Table),
		effects.NewLedger(db, s.Table, inbox.DefaultTTL),
		shop.New(shopCfg, db, sesv2.NewFromConfig(cfg), billing),
		queue.New(sq, s.QueueURL),
		queue.New(sq, s.DLQURL),
		log,
	)
	return h.Handle, nil
}

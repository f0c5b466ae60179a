// Command processor is the SQS-triggered Lambda that runs each event's
// business effects once: env → settings → clients → processor.Handler →
// lambda.Start.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/secrets"
	"github.com/hookinbox/hookinbox/internal/shop"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	if err := run(context.Background(), log); err != nil {
		log.Error("processor cannot start", "reason", err.Error())
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger) error {
	s, err := processor.LoadSettings(os.Getenv)
	if err != nil {
		return err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	apiKey, err := secrets.Resolve(ctx, secretsmanager.NewFromConfig(cfg), s.StripeAPIKey, s.StripeAPIKeyARN)
	if err != nil {
		return err
	}
	shopCfg := shop.Config{Table: s.ShopTable, MailFrom: s.MailFrom}
	if err := shopCfg.Validate(); err != nil {
		return err
	}
	db := dynamodb.NewFromConfig(cfg)
	sq := sqs.NewFromConfig(cfg)
	h := processor.New(
		processor.Config{LeaseFor: s.LeaseFor, MaxReceiveCount: s.MaxReceiveCount},
		inbox.NewDynamoDB(db, s.Table),
		effects.NewLedger(db, s.Table, inbox.DefaultTTL),
		shop.New(shopCfg, db, sesv2.NewFromConfig(cfg), shop.NewStripeBilling(apiKey[0], s.StripeAPIURL, &http.Client{Timeout: 20 * time.Second})),
		queue.New(sq, s.QueueURL),
		queue.New(sq, s.DLQURL),
		log,
	)
	lambda.StartWithOptions(h.Handle, lambda.WithContext(ctx))
	return nil
}

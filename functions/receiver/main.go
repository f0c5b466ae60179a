// Command receiver is the webhook receiver Lambda (API Gateway HTTP API,
// payload v2): env → settings → clients → receiver.Handler → lambda.Start.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/secrets"
	"github.com/hookinbox/hookinbox/internal/verify"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	if err := run(context.Background(), log); err != nil {
		log.Error("receiver cannot start", "reason", err.Error())
		os.Exit(1)
	}
}

func run(ctx context.Context, log *slog.Logger) error {
	s, err := receiver.LoadSettings(os.Getenv)
	if err != nil {
		return err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return err
	}
	signing, err := secrets.Resolve(ctx, secretsmanager.NewFromConfig(cfg), s.StripeSecrets, s.StripeSecretARN)
	if err != nil {
		return err
	}
	stripe := &verify.Stripe{Secrets: signing, Tolerance: s.Tolerance}
	if err := stripe.Validate(); err != nil {
		return err
	}
	h := receiver.New(
		receiver.Config{MaxBodyBytes: s.MaxBodyBytes, Grace: s.Grace},
		map[string]receiver.Verifier{"stripe": receiver.StripeVerifier(stripe)},
		inbox.NewDynamoDB(dynamodb.NewFromConfig(cfg), s.Table),
		queue.New(sqs.NewFromConfig(cfg), s.QueueURL),
		log,
	)
	lambda.StartWithOptions(h.Handle, lambda.WithContext(ctx))
	return nil
}

package lambdafn

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/secrets"
	"github.com/hookinbox/hookinbox/internal/verify"
)

// Receiver builds the webhook receiver (API Gateway HTTP API, payload v2).
func Receiver(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	s, err := receiver.LoadSettings(getenv)
	if err != nil {
		return nil, err
	}
	signing, err := secrets.Resolve(ctx, secretsmanager.NewFromConfig(cfg), s.StripeSecrets, s.StripeSecretARN)
	if err != nil {
		return nil, err
	}
	stripe := &verify.Stripe{Secrets: signing, Tolerance: s.Tolerance}
	if err := stripe.Validate(); err != nil {
		return nil, err
	}
	h := receiver.New(
		receiver.Config{MaxBodyBytes: s.MaxBodyBytes, Grace: s.Grace},
		map[string]receiver.Verifier{verify.StripeProvider: receiver.StripeVerifier(stripe)},
		inbox.NewDynamoDB(dynamodb.NewFromConfig(cfg), s.Table),
		queue.New(sqs.NewFromConfig(cfg), s.QueueURL),
		log,
	)
	return h.Handle, nil
}

// Package receiverfn builds the webhook receiver function from its
// environment: its settings, clients and handler, and nothing the other
// functions use.
package receiverfn

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/secrets"
	"github.com/hookinbox/hookinbox/internal/verify"
)

// Build builds the webhook receiver (API Gateway HTTP API, payload v2).
func Build(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	s, err := receiver.LoadSettings(getenv)
	if err != nil {
		return nil, err
	}
	stripe, err := stripeVerifier(ctx, cfg, s)
	if err != nil {
		return nil, err
	}
	rec, err := lambdafn.Recorder(getenv)
	if err != nil {
		return nil, err
	}
	in := intake.New(
		intake.Config{Grace: s.Grace, Metrics: rec},
		inbox.NewDynamoDB(dynamodb.NewFromConfig(cfg), s.Table),
		queue.New(sqs.NewFromConfig(cfg), s.QueueURL),
		log,
	)
	h := receiver.New(
		receiver.Config{MaxBodyBytes: s.MaxBodyBytes, Metrics: rec},
		map[string]receiver.Verifier{verify.StripeProvider: stripe},
		in, log,
	)
	return h.Handle, nil
}

// stripeVerifier verifies with the secrets in STRIPE_WEBHOOK_SECRET as
// they are, or with the Secrets Manager secret STRIPE_WEBHOOK_SECRET_ARN,
// reloaded when older than SECRET_MAX_AGE (so a revoked secret stops
// verifying) and when a signature does not match (so a rolled secret takes
// effect), in warm functions too.
func stripeVerifier(ctx context.Context, cfg aws.Config, s receiver.Settings) (receiver.Verifier, error) {
	if len(s.StripeSecrets) > 0 {
		v := &verify.Stripe{Secrets: s.StripeSecrets, Tolerance: s.Tolerance}
		if err := v.Validate(); err != nil {
			return nil, err
		}
		return receiver.StripeVerifier(v), nil
	}
	sm := secretsmanager.NewFromConfig(cfg)
	v := &verify.RotatingStripe{
		Load:           func(ctx context.Context) ([]string, error) { return secrets.List(ctx, sm, s.StripeSecretARN) },
		MaxAge:         s.SecretMaxAge,
		ReloadInterval: s.SecretReload,
		Tolerance:      s.Tolerance,
	}
	if err := v.Init(ctx); err != nil {
		return nil, err
	}
	return receiver.RotatingStripeVerifier(v), nil
}

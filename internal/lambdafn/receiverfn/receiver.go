// Package receiverfn builds the webhook receiver function from its
// environment: its settings, clients and handler, and nothing the other
// functions use.
package receiverfn

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/hookinbox/hookinbox/provider"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// Build builds the webhook receiver (API Gateway HTTP API, payload v2)
// with a verifier for every provider whose secret is set.
func Build(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	s, err := LoadSettings(getenv)
	if err != nil {
		return nil, err
	}
	providers, err := receiverProviders(ctx, cfg, s)
	if err != nil {
		return nil, err
	}
	rec, err := lambdafn.Recorder(getenv)
	if err != nil {
		return nil, err
	}
	// A type only a header names (GitHub, Shopify) is counted as "other".
	rec = rec.WithEventTypes(verify.TypeBounded)
	in := intake.New(
		intake.Config{Grace: s.Grace, Metrics: rec},
		inbox.NewDynamoDB(dynamodb.NewFromConfig(cfg), s.Table),
		queue.New(sqs.NewFromConfig(cfg), s.QueueURL),
		log,
	)
	// Without METRICS_FILE the metrics go to stdout with the log lines.
	oneStream := getenv("METRICS_FILE") == ""
	h := receiver.New(receiver.Config{MaxBodyBytes: s.MaxBodyBytes, Metrics: rec, LogInMetrics: oneStream}, providers, in, log)
	return h.Handle, nil
}

// receiverProviders builds the enabled providers from verify.Specs: each
// verifies with the secrets in its variable as they are, or with its
// Secrets Manager secret, reloaded when older than SECRET_MAX_AGE (so a
// revoked secret stops verifying) and when a signature does not match (so
// a rolled secret takes effect), in warm functions too. An unsigned provider
// (GoPay) needs no secret here: its secret is the processor's.
func receiverProviders(ctx context.Context, cfg aws.Config, s Settings) (map[string]receiver.Provider, error) {
	opts := verify.Options{StripeTolerance: s.Tolerance}
	var sm *secretsmanager.Client
	providers := map[string]receiver.Provider{}
	for _, spec := range verify.Specs {
		ps, enabled := s.Secrets[spec.Name]
		if !enabled {
			continue
		}
		var v provider.Verifier
		var err error
		switch {
		case spec.Unsigned:
			v, err = spec.New(nil, opts)
		case len(ps.Inline) > 0:
			v, err = spec.New(ps.Inline, opts)
		default:
			if sm == nil {
				sm = secretsmanager.NewFromConfig(cfg)
			}
			arn, spec := ps.ARN, spec
			r := &verify.Rotating{
				Secrets: &secrets.Rotating{
					Load:        func(ctx context.Context) ([]string, error) { return secrets.List(ctx, sm, arn) },
					MaxAge:      s.SecretMaxAge,
					MinInterval: s.SecretReload,
				},
				New: func(secrets []string) (provider.Verifier, error) { return spec.New(secrets, opts) },
			}
			v, err = r, r.Init(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", spec.Name, err)
		}
		providers[spec.Name] = receiver.Provider{Verifier: v, Method: spec.Method, Accepted: spec.Accepted}
	}
	return providers, nil
}

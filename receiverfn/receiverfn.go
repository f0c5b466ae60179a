// Package receiverfn runs hookinbox's webhook receiver Lambda (API Gateway
// HTTP API, payload v2) with your own providers beside hookinbox's. It
// verifies each delivery over its raw bytes, claims it once in the inbox,
// sends it to the events queue only once the claim is stored, and answers
// fast: a duplicate is answered 200 without a second message. A receiver
// main is one line:
//
//	func main() { receiverfn.Run(warehouse.Provider{}) }
//
// A provider is enabled when its secret variable (provider.Webhook's
// SecretEnv, or that name with _ARN for a Secrets Manager secret) is set.
// Secrets from Secrets Manager are reloaded in warm functions when older
// than SECRET_MAX_AGE and when no signature matches. A cold start names
// every missing setting in one error.
package receiverfn

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/provider"
)

// Run is the whole main of a receiver Lambda of hookinbox's providers and
// yours: JSON logs, the AWS config of the Lambda environment, the handler,
// lambda.Start. A function that cannot start logs why and exits 1.
func Run(providers ...provider.Provider) { lambdafn.Main(Builder(providers...)) }

// Builder returns what Run starts, for running the receiver in-process
// (hookinbox dev, hookinboxtest): it builds the handler from cfg and the
// environment getenv reads.
func Builder(providers ...provider.Provider) func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	return func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
		reg, err := builtin.Registry(providers...)
		if err != nil {
			return nil, err
		}
		return build(ctx, cfg, getenv, log, reg)
	}
}

// build builds the receiver of reg's providers, with a verifier for every
// one whose secret is set.
func build(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger, reg *provider.Registry) (any, error) {
	s, err := loadSettings(getenv, reg)
	if err != nil {
		return nil, err
	}
	env := &provider.Env{Getenv: getenv, AWS: cfg}
	env.LoadSecret = secrets.Loader(env, s.SecretMaxAge, s.SecretReload)
	providers, err := receiverProviders(ctx, env, reg, s)
	if err != nil {
		return nil, err
	}
	rec, err := lambdafn.Recorder(getenv)
	if err != nil {
		return nil, err
	}
	// A type only a header names (GitHub, Shopify) is counted as "other".
	rec = rec.WithEventTypes(reg.TypeBounded)
	hasher, indexes, err := privacy.FromEnv(ctx, env)
	if err != nil {
		return nil, err
	}
	icfg := intake.Config{Grace: s.Grace, Metrics: rec}
	if indexes {
		icfg.Subjects = privacy.Subjects(reg, hasher)
	}
	in := intake.New(
		icfg,
		inbox.NewDynamoDB(dynamodb.NewFromConfig(cfg), s.Table).WithBodies(inbox.BodiesFor(cfg, s.Bucket, s.S3PathStyle)),
		queue.New(sqs.NewFromConfig(cfg), s.QueueURL),
		log,
	)
	// Without METRICS_FILE the metrics go to stdout with the log lines.
	oneStream := getenv("METRICS_FILE") == ""
	h := receiver.New(receiver.Config{MaxBodyBytes: s.MaxBodyBytes, Metrics: rec, LogInMetrics: oneStream}, providers, in, log)
	return h.Handle, nil
}

// receiverProviders builds the enabled providers of reg: each verifies
// with the secrets in its variable as they are, or with its Secrets
// Manager secret, reloaded when older than SECRET_MAX_AGE (so a revoked
// secret stops verifying) and when a signature does not match (so a
// rolled secret takes effect), in warm functions too. An unsigned
// provider (GoPay) needs no secret here: its secret is the processor's.
func receiverProviders(ctx context.Context, env *provider.Env, reg *provider.Registry, s settings) (map[string]receiver.Provider, error) {
	providers := map[string]receiver.Provider{}
	for _, p := range reg.All() {
		ps, enabled := s.Secrets[p.Name()]
		if !enabled {
			continue
		}
		w := p.Webhook()
		var v provider.Verifier
		var err error
		switch {
		case w.Unsigned:
			v, err = p.Verifier(nil, env)
		case len(ps.Inline) > 0:
			v, err = p.Verifier(ps.Inline, env)
		default:
			r := &rotatingVerifier{
				Secrets: &secrets.Rotating{
					Load:        func(ctx context.Context) ([]string, error) { return secrets.List(ctx, env.SecretsManager(), ps.ARN) },
					MaxAge:      s.SecretMaxAge,
					MinInterval: s.SecretReload,
				},
				New: func(secrets []string) (provider.Verifier, error) { return p.Verifier(secrets, env) },
			}
			v, err = r, r.Init(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", p.Name(), err)
		}
		providers[p.Name()] = receiver.Provider{Verifier: v, Webhook: w}
	}
	return providers, nil
}

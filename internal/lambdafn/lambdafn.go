// Package lambdafn builds each hookinbox Lambda function's handler from its
// environment and an AWS config: settings → clients → handler. The thin
// mains in functions/ call Main with one of these builders, and
// `hookinbox dev` calls the same builders in-process, so the same wiring
// runs in Lambda, in the local stack and in tests (DESIGN rule 9).
//
// A builder never reads os.Getenv, loads AWS config or exits: it is given
// getenv and cfg, and returns an error naming every missing setting.
package lambdafn

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/hookinbox/hookinbox/internal/secrets"
)

// Builder returns a function's handler (any signature lambda.Start takes).
type Builder func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error)

// Builders maps each AWS::Serverless::Function's logical ID in template.yaml
// to its builder.
var Builders = map[string]Builder{
	"ReceiverFunction":   Receiver,
	"ProcessorFunction":  Processor,
	"DlqReplayFunction":  DlqReplay,
	"ReconcilerFunction": Reconciler,
}

// Main is a function's whole main: JSON logs on stdout, the default AWS
// config (endpoints from AWS_ENDPOINT_URL* when set), the handler from
// build, lambda.Start. A function that cannot start logs why and exits 1.
func Main(build Builder) {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	var h any
	if err == nil {
		h, err = build(ctx, cfg, os.Getenv, log)
	}
	if err != nil {
		log.Error("function cannot start", "reason", err.Error())
		os.Exit(1)
	}
	lambda.Start(h)
}

// rotatingSecret returns the values given inline (local runs), or those of
// the Secrets Manager secret arn, loaded now and kept fresh while the
// function stays warm: loaded again when older than maxAge, and when a
// caller finds them refused, at most once per minInterval.
func rotatingSecret(ctx context.Context, cfg aws.Config, inline []string, arn string, maxAge, minInterval time.Duration) (*secrets.Rotating, error) {
	load := func(context.Context) ([]string, error) { return inline, nil }
	if len(inline) == 0 {
		sm := secretsmanager.NewFromConfig(cfg)
		load = func(ctx context.Context) ([]string, error) { return secrets.List(ctx, sm, arn) }
	}
	r := &secrets.Rotating{Load: load, MaxAge: maxAge, MinInterval: minInterval}
	if err := r.Init(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// stripeHTTPClient is the HTTP client of every Stripe API call: bounded
// well inside a function's timeout.
func stripeHTTPClient() *http.Client { return &http.Client{Timeout: 20 * time.Second} }

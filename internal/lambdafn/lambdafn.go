// Package lambdafn is what every hookinbox Lambda function's wiring shares:
// the Builder signature, Main, and the AWS configuration a function reads
// from its Lambda environment.
//
// Each function's builder lives in its own public package (receiverfn,
// processorfn, replayfn, reconcilerfn, eventbridgefn), so each bootstrap
// links only what its function uses; internal/local/catalog maps the
// template's logical IDs to all of them for `hookinbox dev` and the
// tests, which run the same builders in-process: the same handler code
// runs in Lambda, in the local stack and in tests. This package links no
// handler and no service client.
//
// A builder never reads os.Getenv, loads AWS config or exits: it is given
// getenv and cfg, and returns an error naming every missing setting.
package lambdafn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
)

// Builder returns a function's handler (any signature lambda.Start takes).
type Builder func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error)

// Main is a function's whole main: JSON logs on stdout (internal/platform/logs: at
// Lambda's log level, request ids added, emails scrubbed), the AWS config of
// the Lambda environment (loadConfig), the handler from build, lambda.Start.
// A function that cannot start logs why and exits 1.
func Main(build Builder) {
	log := logs.New(os.Stdout, logs.Level(os.Getenv))
	ctx := context.Background()
	cfg, err := loadConfig(ctx)
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

// loadConfig returns the AWS configuration a Lambda function runs with:
// config.LoadDefaultConfig, so every AWS_* variable the SDK honours is
// honoured (AWS_REGION, the execution role's credentials,
// AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE>, AWS_USE_FIPS_ENDPOINT,
// AWS_USE_DUALSTACK_ENDPOINT, AWS_MAX_ATTEMPTS, AWS_RETRY_MODE, ...), and
// the same bootstrap runs against AWS, the local emulators or LocalStack.
// A configuration without a region is an error that says so.
func loadConfig(ctx context.Context) (aws.Config, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, errors.New("AWS configuration: no region (Lambda sets AWS_REGION)")
	}
	return cfg, nil
}

// Inbox is where every function finds the events, as template.yaml sets
// it; each function's settings embed it.
type Inbox struct {
	Table    string // INBOX_TABLE
	QueueURL string // EVENTS_QUEUE_URL
	// Bucket keeps the bodies too large for an item (BODY_BUCKET); empty
	// keeps none, and a larger body is refused or cannot be read.
	Bucket string
	// S3PathStyle addresses the bucket in the path, as local S3 servers
	// want: when AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL is set.
	S3PathStyle bool
}

// ReadInbox reads INBOX_TABLE and EVENTS_QUEUE_URL, both required, and
// BODY_BUCKET; r reports what is missing with the function's other
// settings.
func ReadInbox(r *envconfig.Reader) Inbox {
	return Inbox{
		Table: r.Required("INBOX_TABLE"), QueueURL: r.Required("EVENTS_QUEUE_URL"),
		Bucket:      r.String("BODY_BUCKET", ""),
		S3PathStyle: r.String("AWS_ENDPOINT_URL_S3", "") != "" || r.String("AWS_ENDPOINT_URL", "") != "",
	}
}

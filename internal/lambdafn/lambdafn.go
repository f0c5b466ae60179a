// Package lambdafn is what every hookinbox Lambda function's wiring shares:
// the Builder signature, Main, and the AWS configuration a function reads
// from its Lambda environment.
//
// Each function's builder lives in its own package beside this one
// (receiverfn, processorfn, replayfn, reconcilerfn), so each bootstrap
// links only what its function uses; catalog maps the template's logical
// IDs to all four for `hookinbox dev` and the tests, which run the same
// builders in-process (DESIGN rule 9). This package links no handler and
// no service client.
//
// A builder never reads os.Getenv, loads AWS config or exits: it is given
// getenv and cfg, and returns an error naming every missing setting.
package lambdafn

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
)

// Builder returns a function's handler (any signature lambda.Start takes).
type Builder func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error)

// Main is a function's whole main: JSON logs on stdout (internal/platform/logs: at
// Lambda's log level, request ids added, emails scrubbed), the AWS config of
// the Lambda environment (AWSConfig), the handler from build, lambda.Start.
// A function that cannot start logs why and exits 1.
func Main(build Builder) {
	log := logs.New(os.Stdout, logs.Level(os.Getenv))
	ctx := context.Background()
	cfg, err := AWSConfig(os.Getenv)
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

// AWSConfig returns the AWS configuration a Lambda function runs with,
// read from the variables Lambda sets: AWS_REGION (or AWS_DEFAULT_REGION)
// and the execution role's AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN. Endpoints come from AWS_ENDPOINT_URL and
// AWS_ENDPOINT_URL_<SERVICE> (unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS
// is true), as with the SDK's config.LoadDefaultConfig, so the same
// bootstrap runs against AWS, the local emulators or LocalStack.
//
// It is config.LoadDefaultConfig cut down to what a function uses: that
// loader also links the shared-config-file, SSO, STS, IMDS and
// credential-process providers (about 40 packages and 1 MB of every
// bootstrap) that a Lambda function never needs. It reports every missing
// variable in one error.
func AWSConfig(getenv func(string) string) (aws.Config, error) {
	region := getenv("AWS_REGION")
	if region == "" {
		region = getenv("AWS_DEFAULT_REGION")
	}
	id, secret := getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	var missing []string
	if region == "" {
		missing = append(missing, "AWS_REGION")
	}
	if id == "" {
		missing = append(missing, "AWS_ACCESS_KEY_ID")
	}
	if secret == "" {
		missing = append(missing, "AWS_SECRET_ACCESS_KEY")
	}
	if len(missing) > 0 {
		return aws.Config{}, errors.New("AWS configuration: missing " + strings.Join(missing, ", ") + " (Lambda sets them)")
	}
	cfg := aws.Config{
		Region:        region,
		Credentials:   aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, getenv("AWS_SESSION_TOKEN"))),
		ConfigSources: []any{envEndpoints(getenv)},
	}
	if u := getenv("AWS_ENDPOINT_URL"); u != "" && !envEndpoints(getenv).ignored() {
		cfg.BaseEndpoint = aws.String(u)
	}
	return cfg, nil
}

// envEndpoints answers the SDK clients' questions about configured
// endpoints from the environment, as the SDK's own EnvConfig does.
type envEndpoints func(string) string

func (e envEndpoints) ignored() bool {
	return strings.EqualFold(e("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"), "true")
}

// GetIgnoreConfiguredEndpoints implements the SDK's endpoint-source
// interface: AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true turns every
// configured endpoint off.
func (e envEndpoints) GetIgnoreConfiguredEndpoints(context.Context) (bool, bool, error) {
	if e("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS") == "" {
		return false, false, nil
	}
	return e.ignored(), true, nil
}

// GetServiceBaseEndpoint implements the SDK's endpoint-source interface:
// the variable EndpointVariable names.
func (e envEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	u := e(EndpointVariable(sdkID))
	return u, u != "", nil
}

// EndpointVariable returns the variable that sets the endpoint of the
// service whose SDK ID is sdkID: AWS_ENDPOINT_URL_<SERVICE>, the ID
// upper-cased with spaces as underscores ("Secrets Manager" →
// AWS_ENDPOINT_URL_SECRETS_MANAGER).
func EndpointVariable(sdkID string) string {
	return "AWS_ENDPOINT_URL_" + strings.ToUpper(strings.ReplaceAll(sdkID, " ", "_"))
}

// Inbox is where every function finds the events, as template.yaml sets
// it; each function's settings embed it.
type Inbox struct {
	Table    string // INBOX_TABLE
	QueueURL string // EVENTS_QUEUE_URL
}

// ReadInbox reads INBOX_TABLE and EVENTS_QUEUE_URL, both required; r
// reports what is missing with the function's other settings.
func ReadInbox(r *envconfig.Reader) Inbox {
	return Inbox{Table: r.Required("INBOX_TABLE"), QueueURL: r.Required("EVENTS_QUEUE_URL")}
}

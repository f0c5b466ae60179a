package devstack

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// ConfigFromEnv returns the AWS configuration of a function built in
// process (the local stack, tests, the CLI against the local stack) from
// the environment it is given rather than the process's: AWS_REGION (or
// AWS_DEFAULT_REGION), AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, and endpoints from AWS_ENDPOINT_URL and
// AWS_ENDPOINT_URL_<SERVICE> (unless AWS_IGNORE_CONFIGURED_ENDPOINT_URLS
// is true), read as config.LoadDefaultConfig reads them in Lambda
// (as a function loads it), but with nothing from the developer's own AWS
// profile. It reports every missing variable in one error.
func ConfigFromEnv(getenv func(string) string) (aws.Config, error) {
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

package lambdafn

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// lambdaEnv sets the variables Lambda sets, and points the SDK's shared
// files at nothing, so the developer's own AWS profile plays no part.
func lambdaEnv(t *testing.T, extra map[string]string) {
	t.Helper()
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN": "token", "AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none, "AWS_PROFILE": "",
		"AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_DYNAMODB": "", "AWS_ENDPOINT_URL_SQS": "",
		"AWS_USE_FIPS_ENDPOINT": "", "AWS_USE_DUALSTACK_ENDPOINT": "", "AWS_MAX_ATTEMPTS": "", "AWS_RETRY_MODE": "",
	} {
		t.Setenv(k, v)
	}
	for k, v := range extra {
		t.Setenv(k, v)
	}
}

// hosts records the host of every request and refuses it with a 400 the
// SDK does not retry.
type hosts struct {
	mu   sync.Mutex
	seen []string
}

func (h *hosts) Do(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.seen = append(h.seen, req.URL.Host)
	h.mu.Unlock()
	return &http.Response{
		StatusCode: 400, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:    io.NopCloser(strings.NewReader(`{"__type":"ValidationException","message":"test"}`)),
		Request: req,
	}, nil
}

// TestLoadConfigHonoursTheSDKVariables: the functions' configuration is
// the SDK's own loader, so FIPS and dual-stack endpoints, endpoint
// overrides and retry settings take effect on every service client the
// functions make, as they do for any SDK program.
func TestLoadConfigHonoursTheSDKVariables(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string // DynamoDB, SQS, Secrets Manager, SES hosts
	}{
		{"AWS", nil, []string{"dynamodb.eu-west-1.amazonaws.com", "sqs.eu-west-1.amazonaws.com", "secretsmanager.eu-west-1.amazonaws.com", "email.eu-west-1.amazonaws.com"}},
		{"FIPS", map[string]string{"AWS_USE_FIPS_ENDPOINT": "true"},
			[]string{"dynamodb-fips.eu-west-1.amazonaws.com", "sqs-fips.eu-west-1.amazonaws.com", "secretsmanager-fips.eu-west-1.amazonaws.com", "email-fips.eu-west-1.amazonaws.com"}},
		{"dual-stack", map[string]string{"AWS_USE_DUALSTACK_ENDPOINT": "true"},
			[]string{"dynamodb.eu-west-1.api.aws", "sqs.eu-west-1.api.aws", "secretsmanager.eu-west-1.amazonaws.com", "email.eu-west-1.api.aws"}}, // Secrets Manager has no dual-stack endpoint in eu-west-1
		{"endpoint overrides", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:4566", "AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:2"},
			[]string{"127.0.0.1:4566", "127.0.0.1:2", "127.0.0.1:4566", "127.0.0.1:4566"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lambdaEnv(t, tc.env)
			cfg, err := loadConfig(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			h := &hosts{}
			cfg.HTTPClient = h
			ctx := context.Background()
			dynamodb.NewFromConfig(cfg).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}}})
			sqs.NewFromConfig(cfg).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String("https://sqs.eu-west-1.amazonaws.com/1/q")})
			secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("s")})
			sesv2.NewFromConfig(cfg).GetAccount(ctx, &sesv2.GetAccountInput{})
			if strings.Join(h.seen, " ") != strings.Join(tc.want, " ") {
				t.Errorf("requests went to %q, want %q", h.seen, tc.want)
			}
			creds, err := cfg.Credentials.Retrieve(ctx)
			if err != nil || creds.AccessKeyID != "AKIDEXAMPLE" || creds.SessionToken != "token" {
				t.Errorf("credentials %+v, %v; want the execution role's from the environment", creds, err)
			}
		})
	}
}

func TestLoadConfigRetrySettings(t *testing.T) {
	lambdaEnv(t, map[string]string{"AWS_MAX_ATTEMPTS": "7", "AWS_RETRY_MODE": "adaptive"})
	cfg, err := loadConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RetryMaxAttempts != 7 || cfg.RetryMode != aws.RetryModeAdaptive {
		t.Errorf("RetryMaxAttempts %d, RetryMode %q; want 7, adaptive", cfg.RetryMaxAttempts, cfg.RetryMode)
	}
	if got := dynamodb.NewFromConfig(cfg).Options().Retryer.MaxAttempts(); got != 7 {
		t.Errorf("DynamoDB client makes %d attempts, want 7", got)
	}
}

func TestLoadConfigWithoutRegion(t *testing.T) {
	lambdaEnv(t, map[string]string{"AWS_REGION": "", "AWS_DEFAULT_REGION": ""})
	if _, err := loadConfig(context.Background()); err == nil || !strings.Contains(err.Error(), "AWS_REGION") {
		t.Errorf("loadConfig without a region: %v, want an error naming AWS_REGION", err)
	}
}

package devstack

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

func TestConfigFromEnvMissing(t *testing.T) {
	_, err := ConfigFromEnv(func(string) string { return "" })
	if err == nil {
		t.Fatal("ConfigFromEnv with an empty environment returned no error")
	}
	for _, k := range []string{"AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		if !strings.Contains(err.Error(), k) {
			t.Errorf("error %q does not name %s", err, k)
		}
	}
}

// TestConfigFromEnv checks the region, the credentials and the endpoints
// each SDK client ends up with, for the variables the local stack and
// LocalStack set.
func TestConfigFromEnv(t *testing.T) {
	base := map[string]string{
		"AWS_DEFAULT_REGION":    "eu-west-1",
		"AWS_ACCESS_KEY_ID":     "AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN":     "token",
	}
	tests := []struct {
		name                  string
		env                   map[string]string
		wantDynamoDB, wantSQS string // "" is the SDK's own endpoint
		wantSecretsManager    string
	}{
		{name: "AWS", env: map[string]string{}},
		{
			name:         "per service",
			env:          map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:2"},
			wantDynamoDB: "http://127.0.0.1:1", wantSQS: "http://127.0.0.1:2",
		},
		{
			name:         "LocalStack",
			env:          map[string]string{"AWS_ENDPOINT_URL": "http://localhost:4566", "AWS_ENDPOINT_URL_SECRETS_MANAGER": "http://127.0.0.1:3"},
			wantDynamoDB: "http://localhost:4566", wantSQS: "http://localhost:4566", wantSecretsManager: "http://127.0.0.1:3",
		},
		{
			name: "ignored",
			env:  map[string]string{"AWS_ENDPOINT_URL": "http://localhost:4566", "AWS_ENDPOINT_URL_SQS": "http://127.0.0.1:2", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": "true"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range base {
				env[k] = v
			}
			for k, v := range tc.env {
				env[k] = v
				// The SDK's clients look at these two in the process
				// environment themselves, as they do in Lambda.
				if k == "AWS_ENDPOINT_URL" || strings.HasPrefix(k, "AWS_ENDPOINT_URL_") {
					t.Setenv(k, v)
				}
			}
			cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Region != "eu-west-1" {
				t.Errorf("Region = %q, want eu-west-1", cfg.Region)
			}
			creds, err := cfg.Credentials.Retrieve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if creds.AccessKeyID != "AKIDEXAMPLE" || creds.SecretAccessKey != "secret" || creds.SessionToken != "token" {
				t.Errorf("credentials = %+v", creds)
			}
			endpoint := func(p *string) string { return aws.ToString(p) }
			if got := endpoint(dynamodb.NewFromConfig(cfg).Options().BaseEndpoint); got != tc.wantDynamoDB {
				t.Errorf("DynamoDB endpoint = %q, want %q", got, tc.wantDynamoDB)
			}
			if got := endpoint(sqs.NewFromConfig(cfg).Options().BaseEndpoint); got != tc.wantSQS {
				t.Errorf("SQS endpoint = %q, want %q", got, tc.wantSQS)
			}
			if got := endpoint(secretsmanager.NewFromConfig(cfg).Options().BaseEndpoint); got != tc.wantSecretsManager {
				t.Errorf("Secrets Manager endpoint = %q, want %q", got, tc.wantSecretsManager)
			}
		})
	}
}

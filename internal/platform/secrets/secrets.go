// Package secrets fetches hookinbox's secrets from AWS Secrets Manager.
//
// A secret's SecretString holds one value, several separated by commas
// (several webhook signing secrets during a rotation), or a JSON array of
// strings (for values that contain a comma). Values are never logged or
// put in errors.
package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
)

// secretsAPI lists the Secrets Manager call this package makes
// (*secretsmanager.Client).
type secretsAPI interface {
	GetSecretValue(context.Context, *secretsmanager.GetSecretValueInput, ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// List returns the comma-separated values of the secret named by arn.
func List(ctx context.Context, client secretsAPI, arn string) ([]string, error) {
	out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return nil, fmt.Errorf("get secret %s: %w", arn, err)
	}
	if out.SecretString == nil {
		return nil, fmt.Errorf("secret %s has no SecretString", arn)
	}
	vals, err := Parse(*out.SecretString)
	if err != nil {
		return nil, fmt.Errorf("secret %s: %w", arn, err)
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("secret %s is empty", arn)
	}
	return vals, nil
}

// Parse reads a list of secrets: a JSON array of strings when it starts
// with "[", each kept exactly as written (commas included), or else
// comma-separated values, trimmed, empty ones dropped. A JSON array with an
// empty string, or that is not an array of strings, is an error that does
// not repeat the value, as is a JSON object (Secrets Manager's key/value
// form), which splitting would cut into pieces.
func Parse(value string) ([]string, error) {
	trimmed := strings.TrimSpace(value)
	if strings.HasPrefix(trimmed, "{") {
		return nil, errors.New("is a JSON object (the console's key/value form): store the plaintext, comma-separated or as a JSON array")
	}
	if !strings.HasPrefix(trimmed, "[") {
		return envconfig.Split(value), nil
	}
	var vals []string
	if err := json.Unmarshal([]byte(value), &vals); err != nil {
		return nil, errors.New("starts with [ but is not a JSON array of strings")
	}
	for i, v := range vals {
		if strings.TrimSpace(v) == "" {
			return nil, fmt.Errorf("JSON array entry %d is empty", i)
		}
	}
	return vals, nil
}

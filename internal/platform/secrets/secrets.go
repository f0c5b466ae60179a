// Package secrets fetches hookinbox's secrets from AWS Secrets Manager.
//
// A secret's SecretString holds one value, or several separated by commas
// (several webhook signing secrets during a rotation). Values are never
// logged or put in errors.
package secrets

import (
	"context"
	"fmt"

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
	vals := envconfig.Split(*out.SecretString)
	if len(vals) == 0 {
		return nil, fmt.Errorf("secret %s is empty", arn)
	}
	return vals, nil
}

package awsapi

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// GetSecretValueInput is Secrets Manager's GetSecretValue request.
type GetSecretValueInput struct {
	SecretId     string
	VersionId    string `json:",omitempty"`
	VersionStage string `json:",omitempty"`
}

// GetSecretValueOutput is Secrets Manager's GetSecretValue answer.
type GetSecretValueOutput struct {
	ARN           string
	Name          string
	SecretString  *string
	SecretBinary  []byte
	VersionId     string
	VersionStages []string
}

// SecretsManager makes Secrets Manager's GetSecretValue.
type SecretsManager struct{ c *Client }

// NewSecretsManager returns a Secrets Manager client on c, a Client for
// SecretsManagerService.
func NewSecretsManager(c *Client) *SecretsManager { return &SecretsManager{c: c} }

// SecretsManagerFromConfig returns a Secrets Manager client configured
// from cfg as the SDK's would be (FromConfig).
func SecretsManagerFromConfig(cfg aws.Config) *SecretsManager {
	return NewSecretsManager(FromConfig(SecretsManagerService, cfg))
}

// GetSecretValue reads a secret's current (or named) version.
func (s *SecretsManager) GetSecretValue(ctx context.Context, in *GetSecretValueInput) (*GetSecretValueOutput, error) {
	return call(ctx, s.c, "GetSecretValue", in, &GetSecretValueOutput{})
}

package standin

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
)

func TestSecretsManagerAnswersTheSDK(t *testing.T) {
	const arn = "arn:aws:secretsmanager:us-east-1:000000000000:secret:hookinbox-forward"
	sm := NewSecretsManager()
	sm.Put(arn, "whsec_a,whsec_b")
	srv, err := Serve(sm, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client := secretsmanager.New(secretsmanager.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	ctx := context.Background()
	for _, id := range []string{arn, "hookinbox-forward"} {
		out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
		if err != nil {
			t.Fatalf("GetSecretValue(%s): %v", id, err)
		}
		if got := aws.ToString(out.SecretString); got != "whsec_a,whsec_b" || aws.ToString(out.ARN) != arn {
			t.Errorf("GetSecretValue(%s) = %q of %s", id, got, aws.ToString(out.ARN))
		}
	}
	_, err = client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("other")})
	var notFound *smtypes.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Errorf("GetSecretValue(other) = %v, want ResourceNotFoundException", err)
	}
	if got := sm.Reads(); got != 2 {
		t.Errorf("Reads = %d, want 2", got)
	}
}

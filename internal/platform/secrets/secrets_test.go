package secrets

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/google/go-cmp/cmp"
)

// secretValueFn is a Secrets Manager whose GetSecretValue answers what the
// function returns for the secret's id.
type secretValueFn func(id string) (*string, error)

func (f secretValueFn) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	v, err := f(aws.ToString(in.SecretId))
	return &secretsmanager.GetSecretValueOutput{SecretString: v}, err
}

func TestList(t *testing.T) {
	tests := []struct {
		name    string
		value   *string
		err     error
		want    []string
		wantErr string
	}{
		{name: "one", value: aws.String("whsec_a"), want: []string{"whsec_a"}},
		{name: "rotation", value: aws.String(" whsec_new , whsec_old,"), want: []string{"whsec_new", "whsec_old"}},
		{name: "empty", value: aws.String(" , "), wantErr: "is empty"},
		{name: "JSON array keeps commas", value: aws.String(`["new, with a comma", " old "]`), want: []string{"new, with a comma", " old "}},
		{name: "empty JSON array", value: aws.String(`[]`), wantErr: "is empty"},
		{name: "JSON array with an empty entry", value: aws.String(`["a,b", ""]`), wantErr: "JSON array entry 1 is empty"},
		{name: "not an array of strings", value: aws.String(`["a,b", 1]`), wantErr: "not a JSON array of strings"},
		{name: "a console key/value secret", value: aws.String(`{"secret":"a,b"}`), wantErr: "is a JSON object"},
		{name: "binary only", value: nil, wantErr: "no SecretString"},
		{name: "api error", err: errors.New("AccessDenied"), wantErr: "AccessDenied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sm := secretValueFn(func(string) (*string, error) { return tt.value, tt.err })
			got, err := List(context.Background(), sm, "arn:aws:secretsmanager:x")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				if tt.value != nil && strings.Contains(err.Error(), *tt.value) && strings.TrimSpace(*tt.value) != "," {
					t.Errorf("error leaks the secret value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("List (-want +got):\n%s", diff)
			}
		})
	}
}

package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/standin"
)

func TestLocalDestinations(t *testing.T) {
	const (
		crmSecret = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:crm"
		crmToken  = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:crm-token"
		crm       = `[{"name":"crm","url":"https://crm.example.com/hook","events":["stripe:*"],"secret":"` + crmSecret + `","header":"X-Token","header_secret":"` + crmToken + `"}]`
	)
	forward := destination.Config{Name: ForwardName, URL: "http://127.0.0.1:4100/", Events: []string{"*"}, Secret: SecretARN("hookinbox-forward"), Concurrency: 4}
	crmConfig := destination.Config{Name: "crm", URL: "https://crm.example.com/hook", Events: []string{"stripe:*"}, Secret: crmSecret, Header: "X-Token", HeaderSecret: crmToken, Concurrency: 4}
	for _, tc := range []struct {
		name    string
		opts    Options
		value   string
		want    []destination.Config
		secrets map[string]string // ARN → the value the stand-in serves
		wantErr string
	}{
		{"none", Options{}, "", nil, nil, ""},
		{"forward only", Options{Forward: "http://127.0.0.1:4100/"}, "", []destination.Config{forward},
			map[string]string{forward.Secret: DestinationSecret}, ""},
		{"the template's, with local secrets", Options{}, crm, []destination.Config{crmConfig},
			map[string]string{crmSecret: DestinationSecret, crmToken: DestinationHeaderValue}, ""},
		{"both, another local secret", Options{Forward: "http://127.0.0.1:4100/", DestinationSecret: "whsec_bXk="}, crm, []destination.Config{crmConfig, forward},
			map[string]string{crmSecret: "whsec_bXk=", forward.Secret: "whsec_bXk="}, ""},
		{"forward not on loopback", Options{Forward: "http://example.com/"}, "", nil, nil, "plain http:// only to"},
		{"name taken", Options{Forward: "http://127.0.0.1:4100/"}, strings.Replace(crm, `"crm"`, `"forward"`, 1), nil, nil, `a destination is named "forward"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Stack{opts: tc.opts, SecretsManager: standin.NewSecretsManager()}
			got, err := s.destinations(tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var cfgs []destination.Config
			if got != "" {
				if err := json.Unmarshal([]byte(got), &cfgs); err != nil {
					t.Fatalf("DESTINATIONS %q: %v", got, err)
				}
			}
			if diff := cmp.Diff(tc.want, cfgs); diff != "" {
				t.Errorf("DESTINATIONS (-want +got):\n%s", diff)
			}
			served := secretValues(t, s.SecretsManager, tc.secrets)
			if diff := cmp.Diff(tc.secrets, served); diff != "" {
				t.Errorf("Secrets Manager stand-in (-want +got):\n%s", diff)
			}
		})
	}
}

// secretValues reads each secret of want from sm with the SDK.
func secretValues(t *testing.T, sm *standin.SecretsManager, want map[string]string) map[string]string {
	t.Helper()
	if len(want) == 0 {
		return nil
	}
	srv, err := standin.Serve(sm, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client := secretsmanager.New(secretsmanager.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	got := map[string]string{}
	for arn := range want {
		out, err := client.GetSecretValue(context.Background(), &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
		if err != nil {
			t.Fatalf("GetSecretValue(%s): %v", arn, err)
		}
		got[arn] = aws.ToString(out.SecretString)
	}
	return got
}

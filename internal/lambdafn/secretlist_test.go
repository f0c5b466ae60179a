package lambdafn_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/providers/github"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/receiverfn"
)

// A GitHub secret that contains a comma, in Secrets Manager: stored as a
// comma-separated list it would verify with its two halves, so the
// receiver refuses to start and says why; stored as a JSON array it is one
// secret, and a delivery signed with it is accepted while one signed with
// a half is not.
func TestSecretWithACommaFromSecretsManager(t *testing.T) {
	const secret = "chosen by a person, 2026-12-02"
	moto := devstacktest.MotoForTest(t)
	listed, _ := secretIn(t, moto, secret)
	array, _ := secretIn(t, moto, `["`+secret+`"]`)
	// Deployed with the parameter, as in AWS, so the role may read it.
	p := pipelinetest.NewWith(t, pipelinetest.Options{Params: map[string]string{"GitHubWebhookSecretArn": array}})
	p.SetEndpoint("Secrets Manager", moto.URL)
	env := map[string]string{
		"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
		devstack.EndpointVariable("Secrets Manager"): moto.URL,
		"INBOX_TABLE": "inbox", "EVENTS_QUEUE_URL": "http://127.0.0.1:1/q",
		"GITHUB_WEBHOOK_SECRET_ARN": listed,
	}
	cfg, err := devstack.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	_, err = receiverfn.Builder()(context.Background(), cfg, func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "github verifier: secret 1 is 10 characters") || strings.Contains(err.Error(), "chosen") {
		t.Fatalf("cold start with a comma-separated secret that a comma shortens: %v; want it refused with the reason, without the secret", err)
	}

	receive := p.Build(t, "ReceiverFunction", map[string]string{
		"GITHUB_WEBHOOK_SECRET": "", "GITHUB_WEBHOOK_SECRET_ARN": array,
	}).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))
	body := []byte(`{"action":"opened","issue":{"number":1}}`)
	for _, tc := range []struct {
		signedWith string
		guid       string
		want       int
	}{
		{secret, "5a0e1c2e-0000-11f0-8000-000000000001", 200},
		{" 2026-12-02", "5a0e1c2e-0000-11f0-8000-000000000002", 401},
		{"chosen by a person", "5a0e1c2e-0000-11f0-8000-000000000003", 401},
	} {
		req := lambdalocal.WebhookEvent("github", "POST", github.Headers(body, tc.signedWith, tc.guid, "issues"), body)
		resp, err := receive(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tc.want {
			t.Errorf("signed with %q: %d, want %d", tc.signedWith, resp.StatusCode, tc.want)
		}
	}
}

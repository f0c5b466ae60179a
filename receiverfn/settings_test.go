package receiverfn

import (
	"context"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/provider"
)

// TestMaxBodyBytesIsBoundedByWhereBodiesGo: with a body bucket the
// default and the bound are the most Lambda can receive; without one, the
// most a payload item holds.
func TestMaxBodyBytesIsBoundedByWhereBodiesGo(t *testing.T) {
	env := func(bucket, maxBody string) func(string) string {
		return func(k string) string {
			return map[string]string{
				"INBOX_TABLE": "inbox", "EVENTS_QUEUE_URL": "https://sqs.example/q",
				"STRIPE_WEBHOOK_SECRET": "whsec_x", "MAX_BODY_BYTES": maxBody, "BODY_BUCKET": bucket,
			}[k]
		}
	}
	for _, tc := range []struct {
		name, bucket, value string
		want                int64 // 0: refused
	}{
		{"default", "bodies", "", 6_258_688},
		{"at the bound", "bodies", strconv.Itoa(receiver.DefaultMaxBodyBytes), receiver.DefaultMaxBodyBytes},
		{"one byte over", "bodies", strconv.Itoa(receiver.DefaultMaxBodyBytes + 1), 0},
		{"no bucket: default", "", "", inbox.MaxPayloadBytes},
		{"no bucket: at the bound", "", strconv.Itoa(inbox.MaxPayloadBytes), inbox.MaxPayloadBytes},
		{"no bucket: one byte over", "", strconv.Itoa(inbox.MaxPayloadBytes + 1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := loadSettings(env(tc.bucket, tc.value), builtinRegistry(t))
			if tc.want == 0 {
				if err == nil || !strings.Contains(err.Error(), "MAX_BODY_BYTES") {
					t.Errorf("loadSettings: %v, want MAX_BODY_BYTES refused", err)
				}
				return
			}
			if err != nil || s.MaxBodyBytes != tc.want {
				t.Errorf("loadSettings = %d, %v; want %d", s.MaxBodyBytes, err, tc.want)
			}
		})
	}
}

// A rotation list cannot shorten a secret: at cold start a GitHub or
// Shopify entry shorter than the provider's minimum is refused with the
// reason (a comma inside a secret splits it), and a JSON array keeps a
// secret with a comma whole.
func TestColdStartRefusesSecretsAListWouldShorten(t *testing.T) {
	const gitHub = "It's a secret, to everybody 42" // a comma, as GitHub allows
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantErr string // "" builds
	}{
		{"a GitHub secret with a comma, comma-separated", map[string]string{"GITHUB_WEBHOOK_SECRET": gitHub},
			"github verifier: secret 0 is 13 characters; github secrets have at least 16"},
		{"the same secret as a JSON array", map[string]string{"GITHUB_WEBHOOK_SECRET": `["It's a secret, to everybody 42"]`}, ""},
		{"a JSON array while rotating", map[string]string{"GITHUB_WEBHOOK_SECRET": `["new secret, with a comma", "old-secret-0123456789"]`}, ""},
		{"a short Shopify secret", map[string]string{"SHOPIFY_WEBHOOK_SECRET": "shpss_0123456789abcdef"},
			"shopify verifier: secret 0 is 22 characters; shopify secrets have at least 32"},
		{"a Shopify rotation", map[string]string{"SHOPIFY_WEBHOOK_SECRET": "shpss_0123456789abcdef0123456789abcdef,0123456789abcdef0123456789abcdef"}, ""},
		{"a broken JSON array", map[string]string{"GITHUB_WEBHOOK_SECRET": `["It's a secret`}, "GITHUB_WEBHOOK_SECRET: starts with [ but is not a JSON array of strings"},
		{"an empty JSON entry", map[string]string{"GITHUB_WEBHOOK_SECRET": `["It's a secret, to everybody 42", ""]`}, "JSON array entry 1 is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"INBOX_TABLE": "inbox", "EVENTS_QUEUE_URL": "https://sqs.example/q"}
			maps.Copy(env, tc.env)
			_, err := Builder()(context.Background(), aws.Config{Region: "us-east-1"}, func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Build: %v, want it to start", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Build: %v, want an error saying %q", err, tc.wantErr)
			case err != nil && strings.Contains(err.Error(), "everybody"):
				t.Errorf("the error repeats the secret: %v", err)
			}
		})
	}
}

func builtinRegistry(t *testing.T) *provider.Registry {
	t.Helper()
	reg, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

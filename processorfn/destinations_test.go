package processorfn_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/processorfn"
)

// TestBuilderWithDestinations: a processor with destinations and no
// business starts, with or without a Stripe key; one with neither does not; a destination's bad setting
// or unreadable secret stops the cold start with its name and field.
func TestBuilderWithDestinations(t *testing.T) {
	const arn = "arn:aws:secretsmanager:us-east-1:000000000000:secret:crm-AbCdEf"
	base := map[string]string{
		"INBOX_TABLE":      "inbox",
		"EVENTS_QUEUE_URL": "http://127.0.0.1:1/000000000000/events",
		"EVENTS_DLQ_URL":   "http://127.0.0.1:1/000000000000/dlq",
		"STRIPE_API_KEY":   "sk_test_1",
	}
	tests := []struct {
		name      string
		env       map[string]string
		wantError []string // nil: it starts
	}{
		{"destinations, no business", map[string]string{
			"DESTINATIONS":        `[{"name":"crm","url":"https://crm.example.com","events":["*"],"secret":"` + arn + `"}]`,
			"DESTINATION_SECRETS": `{"` + arn + `":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`,
		}, nil},
		{"destinations, no business, no Stripe key", map[string]string{
			"DESTINATIONS":        `[{"name":"crm","url":"https://crm.example.com","events":["shopify:*"],"secret":"` + arn + `"}]`,
			"DESTINATION_SECRETS": `{"` + arn + `":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`,
			"STRIPE_API_KEY":      "",
		}, nil},
		{"neither", nil, []string{"no business and no destinations"}},
		{"a bad destination", map[string]string{
			"DESTINATIONS": `[{"name":"crm","url":"http://crm.example.com","events":["*"],"secret":"` + arn + `"}]`,
		}, []string{`DESTINATIONS: destination "crm": url: want https://`}},
		{"plain http to loopback, deployed: the Lambda runtime's API", map[string]string{
			"DESTINATIONS":        `[{"name":"crm","url":"http://127.0.0.1:9001/2018-06-01/runtime/invocation/next","events":["*"],"secret":"` + arn + `"}]`,
			"DESTINATION_SECRETS": `{"` + arn + `":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`,
		}, []string{`DESTINATIONS: destination "crm": url: want https://: plain http:// is for the local stack only`}},
		{"plain http to loopback, in the local stack", map[string]string{
			"DESTINATIONS":            `[{"name":"crm","url":"http://127.0.0.1:4100/","events":["*"],"secret":"` + arn + `"}]`,
			"DESTINATION_SECRETS":     `{"` + arn + `":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}`,
			"DESTINATIONS_LOCAL_HTTP": "1",
		}, nil},
		{"a secret that cannot be read", map[string]string{
			"DESTINATIONS":        `[{"name":"crm","url":"https://crm.example.com","events":["*"],"secret":"` + arn + `"}]`,
			"DESTINATION_SECRETS": `{"` + arn + `":""}`,
		}, []string{`destination "crm": secret:`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if v, ok := tt.env[k]; ok {
					return v
				}
				return base[k]
			}
			_, err := processorfn.Builder(nil)(context.Background(), aws.Config{Region: "us-east-1"}, getenv, slog.New(slog.DiscardHandler))
			if tt.wantError == nil && err != nil {
				t.Fatalf("build: %v", err)
			}
			for _, w := range tt.wantError {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("build = %v; want an error saying %q", err, w)
				}
			}
		})
	}
}

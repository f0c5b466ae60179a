package processorfn_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/webhook"
)

// crm is a business with a setting of its own and none of the shop's.
type crm struct{ url string }

func (c crm) Handle(context.Context, webhook.Event, effects.Runner) error { return nil }

func crmFromEnv(_ context.Context, _ aws.Config, getenv func(string) string) (processorfn.Business, error) {
	url := getenv("CRM_URL")
	if url == "" {
		return nil, errors.New("CRM_URL is required")
	}
	return crm{url: url}, nil
}

func TestBuilderWithOwnBusiness(t *testing.T) {
	env := map[string]string{
		"INBOX_TABLE":      "inbox",
		"EVENTS_QUEUE_URL": "http://127.0.0.1:1/000000000000/events",
		"EVENTS_DLQ_URL":   "http://127.0.0.1:1/000000000000/dlq",
		"STRIPE_API_KEY":   "sk_test_1",
		"CRM_URL":          "http://127.0.0.1:1/crm",
	}
	build := processorfn.Builder(crmFromEnv)
	h, err := build(context.Background(), aws.Config{Region: "us-east-1"}, func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("build without the shop's settings: %v", err)
	}

	// The business is given the Stripe key the processor loaded.
	var keys []string
	withKey := processorfn.Builder(func(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
		if key, err := stripe.KeyFromContext(ctx); err == nil && key != nil {
			keys, _ = key.Values(ctx)
		}
		return crmFromEnv(ctx, cfg, getenv)
	})
	if _, err := withKey(context.Background(), aws.Config{Region: "us-east-1"}, func(k string) string { return env[k] }, slog.New(slog.DiscardHandler)); err != nil || len(keys) != 1 || keys[0] != "sk_test_1" {
		t.Errorf("build: %v; the business got the Stripe key %q, want the processor's sk_test_1", err, keys)
	}
	if _, ok := h.(func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)); !ok {
		t.Errorf("handler is %T, want an SQS batch handler", h)
	}

	// An empty environment: one error names the processor's settings and
	// the business's, and none of the shop's.
	_, err = build(context.Background(), aws.Config{}, func(string) string { return "" }, slog.New(slog.DiscardHandler))
	if err == nil {
		t.Fatal("built with an empty environment")
	}
	for _, k := range []string{"INBOX_TABLE", "EVENTS_QUEUE_URL", "EVENTS_DLQ_URL", "CRM_URL"} {
		if !strings.Contains(err.Error(), k) {
			t.Errorf("error %q does not name %s", err, k)
		}
	}
	for _, k := range []string{"SHOP_TABLE", "MAIL_FROM"} {
		if strings.Contains(err.Error(), k) {
			t.Errorf("error %q names the shop's %s", err, k)
		}
	}
}

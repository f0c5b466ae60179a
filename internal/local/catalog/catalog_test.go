package catalog

import (
	"context"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// TestEveryTemplateFunctionHasABuilder keeps Builders and template.yaml in step.
func TestEveryTemplateFunctionHasABuilder(t *testing.T) {
	tpl, err := samtemplate.Load(filepath.Join("..", "..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var inTemplate, built []string
	inTemplate = tpl.ByType(samtemplate.FunctionType)
	for id := range Builders {
		built = append(built, id)
	}
	sort.Strings(built)
	if diff := cmp.Diff(inTemplate, built); diff != "" {
		t.Errorf("functions in template.yaml (-) vs catalog.Builders (+):\n%s", diff)
	}
}

// TestBuildersReportEveryMissingSetting checks that a function started with
// an empty environment names every missing key in one error.
func TestBuildersReportEveryMissingSetting(t *testing.T) {
	want := map[string][]string{
		"ReceiverFunction":          {"INBOX_TABLE", "EVENTS_QUEUE_URL", "STRIPE_WEBHOOK_SECRET"},
		"ProcessorFunction":         {"INBOX_TABLE", "EVENTS_QUEUE_URL", "EVENTS_DLQ_URL", "SHOP_TABLE", "MAIL_FROM", "STRIPE_API_KEY"},
		"DlqReplayFunction":         {"INBOX_TABLE", "EVENTS_QUEUE_URL", "EVENTS_DLQ_URL"},
		"ReconcilerFunction":        {"INBOX_TABLE", "EVENTS_QUEUE_URL"},
		"StripeEventBridgeFunction": {"INBOX_TABLE", "EVENTS_QUEUE_URL"},
	}
	if len(want) != len(Builders) {
		t.Fatalf("the test covers %d functions, Builders has %d", len(want), len(Builders))
	}
	for id, keys := range want {
		t.Run(id, func(t *testing.T) {
			_, err := Builders[id](context.Background(), aws.Config{}, func(string) string { return "" }, slog.New(slog.DiscardHandler))
			if err == nil {
				t.Fatal("built with an empty environment")
			}
			for _, k := range keys {
				if !strings.Contains(err.Error(), k) {
					t.Errorf("error %q does not name %s", err, k)
				}
			}
		})
	}
}

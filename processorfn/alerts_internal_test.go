package processorfn

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

type businessFunc func(context.Context, webhook.Event, effects.Runner) error

func (f businessFunc) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	return f(ctx, ev, fx)
}

// TestAlertsTellTheOperator: Stripe's report that it could not create
// events is logged with what it names and counted, and never reaches the
// business; every other event does.
func TestAlertsTellTheOperator(t *testing.T) {
	var logs, lines bytes.Buffer
	reached := 0
	fetch, err := stripe.Provider{}.Processor(context.Background(), &provider.Env{})
	if err != nil {
		t.Fatal(err)
	}
	const generationFailure = "v2.core.health.event_generation_failure.resolved"
	h := alerts{
		next:    businessFunc(func(context.Context, webhook.Event, effects.Runner) error { reached++; return nil }),
		alert:   map[string]func(webhook.Event) (provider.Alert, bool){"stripe": fetch.Alert},
		metrics: metrics.New(&lines, "test"),
		log:     slog.New(slog.NewJSONHandler(&logs, nil)),
	}
	raw := []byte(`{"id":"evt_test_65h","object":"event","type":"` + generationFailure + `","data":{"object":{"alert_id":"alrt_1","severity":"critical",` +
		`"summary":"mail jenny@example.com","impact":{"event_type":"customer.subscription.updated","related_object":{"id":"sub_1lost","type":"subscription"}}}}}`)
	if err := h.Handle(context.Background(), webhook.Event{Provider: "stripe", ID: "evt_test_65h", Type: generationFailure, Raw: raw}, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"level":"ERROR"`, `"alert_id":"alrt_1"`, `"event_type":"customer.subscription.updated"`, `"object_id":"sub_1lost"`, `"severity":"critical"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log line lacks %s:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "jenny@example.com") {
		t.Errorf("log line carries an email address:\n%s", logs.String())
	}
	if !strings.Contains(lines.String(), `"StripeEventsNotGenerated":1`) {
		t.Errorf("metric line %q, want StripeEventsNotGenerated 1", lines.String())
	}
	if reached != 0 {
		t.Error("the business saw the health event")
	}
	if err := h.Handle(context.Background(), webhook.Event{Provider: "stripe", ID: "evt_1", Type: "customer.created"}, nil); err != nil || reached != 1 {
		t.Errorf("another event: err %v, reached %d; want it handed to the business", err, reached)
	}
}

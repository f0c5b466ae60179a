package receiver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// TestHostileRequestsAreCountedByFixedReason: every refused request is one
// VerifyFailed by a reason from a fixed set, under the provider only when
// it is a registered one, and never under anything the request chose (an
// unregistered provider name, an event type): a flood of junk cannot mint
// CloudWatch metrics.
func TestHostileRequestsAreCountedByFixedReason(t *testing.T) {
	reasons := []string{"no-signature", "bad-signature", "stale", "future", "not-json", "not-event",
		"no-event-id", "bad-event-id", "too-large", "unknown-provider", "method-not-allowed", "unauthenticated", "malformed"}
	for _, c := range hostileRequests(receiver.DefaultMaxBodyBytes) {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			rec := metrics.New(&buf, "hookinbox/test")
			h := receiver.New(receiver.Config{Metrics: rec}, stripeVerifiers(fixed),
				intake.New(intake.Config{Now: fixed, Metrics: rec}, inboxtest.NewMemory(), &fakeQueue{}, nil), nil)
			if _, err := h.Handle(context.Background(), c.req); err != nil {
				t.Fatal(err)
			}
			lines, err := emf.ReadLines(&buf)
			if err != nil || len(lines) != 1 {
				t.Fatalf("%d metric lines (%v), want 1:\n%s", len(lines), err, buf.String())
			}
			l := lines[0]
			if l.Values[metrics.VerifyFailed] != 1 || len(l.Values) != 1 {
				t.Errorf("metrics %v, want VerifyFailed 1 only", l.Values)
			}
			if !slices.Contains(reasons, l.Dims[metrics.DimReason]) {
				t.Errorf("reason %q is not one of the fixed set", l.Dims[metrics.DimReason])
			}
			if p, ok := l.Dims[metrics.DimProvider]; ok && p != "stripe" || l.Dims[metrics.DimEventType] != "" {
				t.Errorf("dimensions %v: a refused request chose one", l.Dims)
			}
		})
	}
}

// TestBusyIsNotAnIntakeError: a repeat of an id-only notification while
// its fetch runs is answered 503 on purpose; it is counted Busy, not as an
// intake error that the receiver-errors alarm watches.
func TestBusyIsNotAnIntakeError(t *testing.T) {
	var buf bytes.Buffer
	rec := metrics.New(&buf, "hookinbox/test")
	store := inboxtest.NewMemory()
	h := receiver.New(receiver.Config{Metrics: rec}, allProviders(t, fixed), intake.New(intake.Config{Now: fixed, Metrics: rec}, store, &fakeQueue{}, nil), nil)
	ctx := context.Background()
	if resp, _ := h.Handle(ctx, lambdalocal.GoPayNotification("3000006529")); resp.StatusCode != 200 {
		t.Fatalf("first notification: %d", resp.StatusCode)
	}
	if _, err := store.Lease(ctx, "gopay#3000006529", "w1", now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if resp, _ := h.Handle(ctx, lambdalocal.GoPayNotification("3000006529")); resp.StatusCode != 503 {
		t.Fatalf("repeat while fetching: %d, want 503", resp.StatusCode)
	}
	lines, err := emf.ReadLines(&buf)
	if err != nil {
		t.Fatal(err)
	}
	gopay := map[string]string{metrics.DimProvider: "gopay"}
	for name, want := range map[string]float64{metrics.Received: 2, metrics.Busy: 1, metrics.IntakeErrors: 0, metrics.Enqueued: 1} {
		if got := emf.Sum(lines, name, gopay, time.Time{}); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

// TestOneEventWritesOneLine: with metrics and logs on one stream, a
// delivery of one event writes one line to it, whose metrics are its Received and Enqueued
// (Duplicate for the same event again) and whose other members are the
// INFO log line's (level, message, request id, provider, key, type), so
// CloudWatch publishes the metrics and Logs Insights finds the request.
func TestOneEventWritesOneLine(t *testing.T) {
	var out bytes.Buffer // written by one goroutine: the in-memory store takes the payload inline
	rec := metrics.New(&out, "hookinbox/test")
	log := logs.New(&out, slog.LevelInfo)
	h := receiver.New(receiver.Config{Metrics: rec, LogInMetrics: true}, stripeVerifiers(fixed),
		intake.New(intake.Config{Now: fixed, Metrics: rec}, inboxtest.NewMemory(), &fakeQueue{}, log), log)
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	for _, want := range []struct {
		msg     string
		metrics map[string]float64
	}{
		{"webhook accepted", map[string]float64{metrics.Received: 1, metrics.Enqueued: 1}},
		{"webhook duplicate", map[string]float64{metrics.Received: 1, metrics.Duplicate: 1}},
	} {
		out.Reset()
		if resp, err := h.Handle(ctx, signed("customer.created", "evt_oneline")); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%d, %v", resp.StatusCode, err)
		}
		text := strings.TrimSuffix(out.String(), "\n")
		if strings.Count(text, "\n") != 0 {
			t.Fatalf("%s: %d lines, want 1:\n%s", want.msg, strings.Count(text, "\n")+1, text)
		}
		l, err := emf.Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(l.Values, want.metrics) || l.Dims[metrics.DimProvider] != "stripe" || l.Dims[metrics.DimEventType] != "customer.created" {
			t.Errorf("%s: metrics %v under %v, want %v under stripe, customer.created", want.msg, l.Values, l.Dims, want.metrics)
		}
		var fields map[string]any
		if err := json.Unmarshal([]byte(text), &fields); err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]any{"level": "INFO", "msg": want.msg, "request_id": "req-1", "provider": "stripe",
			"key": "stripe#evt_oneline", "type": "customer.created", "livemode": false} {
			if fields[k] != v {
				t.Errorf("%s: %s = %v, want %v", want.msg, k, fields[k], v)
			}
		}
	}

	// Metrics elsewhere (a METRICS_FILE): the log line is written as ever.
	var logOut, metricsOut bytes.Buffer
	rec = metrics.New(&metricsOut, "hookinbox/test")
	log = logs.New(&logOut, slog.LevelInfo)
	h = receiver.New(receiver.Config{Metrics: rec}, stripeVerifiers(fixed),
		intake.New(intake.Config{Now: fixed, Metrics: rec}, inboxtest.NewMemory(), &fakeQueue{}, log), log)
	if resp, err := h.Handle(ctx, signed("customer.created", "evt_twostreams")); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d, %v", resp.StatusCode, err)
	}
	if !strings.Contains(logOut.String(), `"msg":"webhook accepted"`) || strings.Contains(metricsOut.String(), `"msg"`) {
		t.Errorf("metrics on a stream of their own: log %q, metrics %q", logOut.String(), metricsOut.String())
	}
}

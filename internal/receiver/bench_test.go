package receiver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/aws/aws-lambda-go/events"
	stripewebhook "github.com/stripe/stripe-go/v76/webhook"

	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
)

// benchRequests returns n signed deliveries of distinct 2 KB events
// (payment_intent.succeeded padded with metadata to 2048 bytes).
func benchRequests(b *testing.B, n int) []events.APIGatewayV2HTTPRequest {
	b.Helper()
	reqs := make([]events.APIGatewayV2HTTPRequest, n)
	for i := range reqs {
		body := verifytest.StripeEvent("payment_intent.succeeded", fmt.Sprintf("evt_bench%09d", i), now.Add(-time.Second), verifytest.WithSize(2048))
		reqs[i] = request(body, stripe.SignatureHeader(body, now, secret))
	}
	if l := len(reqs[0].Body); l < 1900 || l > 2200 {
		b.Fatalf("bench event is %d bytes, want about 2 KB", l)
	}
	return reqs
}

// BenchmarkReceiverNewEvent is the receiver's hot path for a new event:
// verify, claim, store the payload, enqueue, answer — on the in-memory store
// and a fake queue, so it measures hookinbox's own work.
func BenchmarkReceiverNewEvent(b *testing.B) {
	benchNewEvents(b, handlerOn(fixed, inboxtest.NewMemory(), &fakeQueue{}))
}

// BenchmarkReceiverNewEventLogged is BenchmarkReceiverNewEvent with the
// function's output: the INFO line and the metrics, one line a delivery
// as receiverfn wires them (LogInMetrics), written to io.Discard. The
// difference is what formatting that line costs.
func BenchmarkReceiverNewEventLogged(b *testing.B) {
	rec := metrics.New(io.Discard, "hookinbox")
	in := intake.New(intake.Config{Now: fixed, Metrics: rec}, inboxtest.NewMemory(), &fakeQueue{}, nil)
	log := logs.New(io.Discard, slog.LevelInfo)
	benchNewEvents(b, receiver.New(receiver.Config{Metrics: rec, LogInMetrics: true}, stripeVerifiers(fixed), in, log))
}

// BenchmarkReceiverNewEventWithSubjects is BenchmarkReceiverNewEvent with
// a subject key set, as the template deploys it: the receiver also finds
// the people the event names and hashes them onto the claim, so that an
// erasure finds the event before it has run. The difference is what
// finding them costs.
func BenchmarkReceiverNewEventWithSubjects(b *testing.B) {
	reg, err := builtin.Registry()
	if err != nil {
		b.Fatal(err)
	}
	env := &provider.Env{Getenv: func(k string) string {
		if k == privacy.KeyEnv {
			return "0123456789abcdef0123456789abcdef"
		}
		return ""
	}}
	h, ok, err := privacy.FromEnv(context.Background(), env)
	if err != nil || !ok {
		b.Fatalf("subject key: %v, %v", ok, err)
	}
	in := intake.New(intake.Config{Now: fixed, Subjects: privacy.Subjects(reg, h)}, inboxtest.NewMemory(), &fakeQueue{}, nil)
	benchNewEvents(b, receiver.New(receiver.Config{}, stripeVerifiers(fixed), in, nil))
}

// benchNewEvents delivers b.N distinct new events to h.
func benchNewEvents(b *testing.B, h *receiver.Handler) {
	reqs := benchRequests(b, b.N)
	ctx := context.Background()
	b.SetBytes(int64(len(reqs[0].Body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, _ := h.Handle(ctx, reqs[i])
		if resp.StatusCode != 200 {
			b.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
		}
	}
}

// BenchmarkReceiverDuplicate is the path of a repeated delivery.
func BenchmarkReceiverDuplicate(b *testing.B) {
	reqs := benchRequests(b, 1)
	h := handlerOn(fixed, inboxtest.NewMemory(), &fakeQueue{})
	ctx := context.Background()
	h.Handle(ctx, reqs[0])
	b.SetBytes(int64(len(reqs[0].Body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, _ := h.Handle(ctx, reqs[0])
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// BenchmarkStripeConstructEvent is the baseline: stripe-go's own
// webhook.ConstructEvent (verify and fully unmarshal) on the same payload.
func BenchmarkStripeConstructEvent(b *testing.B) {
	reqs := benchRequests(b, 1)
	body := []byte(reqs[0].Body)
	header := stripe.SignatureHeader(body, time.Now(), secret)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := stripewebhook.ConstructEvent(body, header, secret); err != nil {
			b.Fatal(err)
		}
	}
}

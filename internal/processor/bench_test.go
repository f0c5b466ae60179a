package processor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/webhook"
)

// threeEffects is a business that runs three no-op effects, as the shop's
// checkout does, so the benchmark measures the processor's own work: lease,
// payload, ledger, finish.
type threeEffects struct{}

func (threeEffects) Handle(ctx context.Context, _ webhook.Event, fx effects.Runner) error {
	for _, name := range []string{"grant-access", "welcome-email", "create-invoice"} {
		if err := fx.Do(ctx, name, func(context.Context, string) error { return nil }); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkProcessOneMessage processes one message end to end on the
// in-memory store and ledger.
func BenchmarkProcessOneMessage(b *testing.B) {
	store, q := inbox.NewMemory(), &queues{}
	h := processor.New(processor.Config{}, store, effects.NewMemoryLedger(), threeEffects{}, q, q, nil)
	ctx := context.Background()
	raw := make([]byte, 2048)
	msgs := make([]events.SQSEvent, b.N)
	for i := range msgs {
		ev := webhook.Event{Provider: "stripe", ID: fmt.Sprintf("evt_b%09d", i), Type: "checkout.session.completed", Raw: raw}
		it, err := store.Claim(ctx, inbox.Claim{Event: ev, At: time.Now(), TTL: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		if err := store.PutPayload(ctx, it, raw); err != nil {
			b.Fatal(err)
		}
		msgs[i] = events.SQSEvent{Records: []events.SQSMessage{message(ev.ID, webhook.Envelope{Key: it.Key, Type: ev.Type}.Marshal(), 1)}}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, _ := h.Handle(ctx, msgs[i])
		if len(resp.BatchItemFailures) != 0 {
			b.Fatal("message failed")
		}
	}
}

package pipelinetest_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/webhook"
)

func TestCheckoutDeliveredTwiceIsProcessedOnce(t *testing.T) {
	p := pipelinetest.New(t)
	key, body := pipelinetest.Checkout("ptest", 1, time.Now().Add(-time.Minute))
	if key != "stripe#evt_ptest00001" {
		t.Errorf("Checkout key = %s, want stripe#evt_ptest00001", key)
	}
	if got, want := p.Deliver(t, body), "accepted"; got != want {
		t.Errorf("first delivery: %q, want %q", got, want)
	}
	if got, want := p.Deliver(t, body), "duplicate"; got != want {
		t.Errorf("second delivery: %q, want %q", got, want)
	}
	keys := []webhook.Key{key}
	if p.AllFinal(t, keys) {
		t.Fatal("AllFinal before processing = true, want false")
	}
	p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, keys) })
	if !p.AllIn(t, keys, inbox.Done) {
		t.Errorf("status after processing is not DONE")
	}
	p.EffectsOnce(t, keys)
	if st := p.State(t); len(st.Entitlements) != 1 || len(st.Emails) != 1 || len(st.Invoices) != 1 {
		t.Errorf("shop state %+v, want one entitlement, email and invoice", st)
	}
	if got := p.DLQReasons(t); len(got) != 0 {
		t.Errorf("DLQ = %v, want empty", got)
	}
	if p.AllIn(t, []webhook.Key{"stripe#evt_nobody"}, inbox.Done) {
		t.Error("AllIn of an unclaimed key = true, want false")
	}
}

func TestPeekLeavesAndDrainDeletes(t *testing.T) {
	p := pipelinetest.New(t)
	ctx := context.Background()
	for _, id := range []string{"evt_a", "evt_b"} {
		if err := p.Events.Send(ctx, webhook.Envelope{Key: webhook.NewKey("stripe", id), Type: "checkout.session.completed"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(pipelinetest.Peek(t, p.Events)); got != 2 {
		t.Errorf("Peek: %d messages, want 2", got)
	}
	batch := p.ReceiveBatch(t, 2)
	for _, m := range batch.Records {
		if err := p.Events.Release(ctx, m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(pipelinetest.Drain(t, p.Events)); got != 2 {
		t.Errorf("Drain: %d messages, want 2", got)
	}
	if got := len(pipelinetest.Peek(t, p.Events)); got != 0 {
		t.Errorf("Peek after Drain: %d messages, want 0", got)
	}
}

func TestSyncBufferConcurrentWriters(t *testing.T) {
	var b pipelinetest.SyncBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x\n"))
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "x\n"); got != 800 {
		t.Errorf("%d lines, want 800", got)
	}
}

package processor_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestIDOnlyMessagesRunInALaneOfTheirOwn: in a batch whose id-only
// (GoPay) messages come first and hold every slot, the other providers'
// messages still run at once: each kind has Concurrency slots of its own.
func TestIDOnlyMessagesRunInALaneOfTheirOwn(t *testing.T) {
	othersDone := make(chan struct{})
	fetch := func(ctx context.Context, id string, _ []byte) ([]byte, error) {
		select {
		case <-othersDone:
			return nil, fmt.Errorf("get gopay payment %s: %w", id, provider.ErrNotFound)
		case <-time.After(10 * time.Second): // only when the lane is missing
			return nil, errors.New("the other messages did not run while the id-only fetches held their slots")
		}
	}
	f := newFixture(t, func(c *processor.Config) {
		c.Concurrency = 2
		c.Fetch = map[string]provider.Fetch{"gopay": {Get: fetch, Pointer: always}}
		c.IDOnly = map[string]bool{"gopay": true}
	})
	ctx := context.Background()
	var batch events.SQSEvent
	for i := range 4 {
		id := fmt.Sprint(3000000001 + i)
		ev := webhook.Event{Provider: "gopay", ID: id, Type: "notification", Raw: []byte(`{"id":` + id + `}`), IDOnly: true}
		if _, err := f.store.Claim(ctx, inbox.Claim{Event: ev, At: t0, TTL: time.Hour}); err != nil {
			t.Fatal(err)
		}
		batch.Records = append(batch.Records, message("g"+id, queue.Envelope{Key: ev.Key(), Type: ev.Type}.Marshal(), 1))
	}
	for _, id := range []string{"evt_a", "evt_b", "evt_c"} {
		batch.Records = append(batch.Records, f.claim(t, id, "checkout.session.completed"))
	}
	// The checkouts finish while every GoPay fetch waits.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			all := true
			for _, id := range []string{"evt_a", "evt_b", "evt_c"} {
				if it, err := f.store.Get(ctx, webhook.NewKey("stripe", id)); err != nil || it.Status != inbox.Done {
					all = false
				}
			}
			if all {
				close(othersDone)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	resp, err := f.h.Handle(ctx, batch)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		key := webhook.Key(fmt.Sprintf("gopay#%d", 3000000001+i))
		it, err := f.store.Get(ctx, key)
		if err != nil || it.LastError == "" || it.Status != inbox.Failed {
			t.Fatalf("%s: %+v, %v; want FAILED not found (the first try)", key, it, err)
		}
		if it.LastError != "fetch "+string(key)+" from the provider's API: get gopay payment "+key.EventID()+": not found at the provider" {
			t.Errorf("%s: last error %q", key, it.LastError)
		}
	}
	if len(resp.BatchItemFailures) != 4 {
		t.Errorf("batch item failures %v, want the 4 GoPay messages back for their retry", failedIDs(resp))
	}
}

package processor_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestReplayAfterAnOutageStartsAfresh: an event parked after
// MaxInfraFailures attempts the infrastructure failed, sent back once the
// table answers (a replay's Requeue, or SQS's redrive of its DLQ message),
// is not parked again by its first throttle: its failure counts start
// afresh, and it finishes once the store answers.
func TestReplayAfterAnOutageStartsAfresh(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sendBack func(t *testing.T, f *fixture, key webhook.Key)
	}{
		{"replay", func(t *testing.T, f *fixture, key webhook.Key) {
			if _, err := f.store.Requeue(context.Background(), key, f.now()); err != nil {
				t.Fatal(err)
			}
		}},
		{"SQS redrive of the DLQ message", func(*testing.T, *fixture, webhook.Key) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(c *processor.Config) { c.MaxInfraFailures = 3 })
			msg := f.claim(t, "evt_outage", "checkout.session.completed")
			f.biz.failing["evt_outage/first"] = storeDown
			for range 3 {
				f.clock = f.clock.Add(time.Hour)
				_, _ = f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
				receiveAgain(f, &msg, len(f.q.resent))
			}
			if it := f.status(t, "evt_outage"); it.Status != inbox.Dead || len(f.q.parked) != 1 {
				t.Fatalf("after the outage: %s, %d parked; want DEAD, parked once", it.Status, len(f.q.parked))
			}

			// The table answers again, but throttles the first attempt once.
			f.clock = f.clock.Add(time.Hour)
			tc.sendBack(t, f, webhook.NewKey("stripe", "evt_outage"))
			again := message("evt_outage", msg.Body, 1)
			_, _ = f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{again}})
			if it := f.status(t, "evt_outage"); it.Status != inbox.Failed || it.InfraFailures != 1 || len(f.q.parked) != 1 {
				t.Fatalf("first throttle after the send-back: %s, infra_failures %d, %d parked; want FAILED 1, still parked once",
					it.Status, it.InfraFailures, len(f.q.parked))
			}
			delete(f.biz.failing, "evt_outage/first")
			f.clock = f.clock.Add(time.Hour)
			receiveAgain(f, &again, len(f.q.resent))
			_, _ = f.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{again}})
			f.wantStatus(t, "evt_outage", inbox.Done, 2)
		})
	}
}

package processor_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/webhook"
)

// slowIntents is the effect ledger's table on dynalite whose intent
// writes (an at-most-once effect starting) end at until(), when set.
type slowIntents struct {
	*dynamodb.Client
	until atomic.Pointer[time.Time]
}

func (s *slowIntents) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if state, ok := in.Item["state"].(*types.AttributeValueMemberS); ok && state.Value == "started" {
		if until := s.until.Load(); until != nil {
			time.Sleep(time.Until(*until))
		}
	}
	return s.Client.PutItem(ctx, in, opts...)
}

// TestEffectPastItsDeadlineIsNotStarted: when the ledger's store is so
// slow that an at-most-once effect's own deadline (the invocation's minus
// OUTCOME_RESERVE) passes while its intent is written, the email is not
// sent with an ended context (which would fail without sending and park
// the event as "outcome unknown"): it is not started, the event is
// retried, and the next attempt sends it once.
func TestEffectPastItsDeadlineIsNotStarted(t *testing.T) {
	db, table := devstacktest.TestTable(t, "InboxTable")
	store := &slowIntents{Client: db}
	f := newFixture(t)
	const reserve = 1200 * time.Millisecond
	sent := 0
	h := processor.New(processor.Config{Now: f.now, Jitter: func() float64 { return 0.5 }, Budget: 2 * time.Second, Reserve: reserve},
		f.store, ledger.New(store, table, time.Hour), businessFunc(func(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
			return effects.AtMostOnce(ctx, fx, "welcome-email", func(ctx context.Context, _ string) (string, error) {
				if err := ctx.Err(); err != nil {
					return "", err // the SDK fails without sending
				}
				sent++
				return "msg-1", nil
			})
		}), f.q, f.q, nil)
	msg := f.claim(t, "evt_slowstore", "checkout.session.completed")

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	invocationDeadline, _ := ctx.Deadline()
	// The intent is written after the effect's deadline and well before
	// the ledger's (half the reserve later), which releases it.
	slowUntil := invocationDeadline.Add(-reserve * 5 / 6)
	store.until.Store(&slowUntil)
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg}})
	if err != nil {
		t.Fatal(err)
	}
	it := f.status(t, "evt_slowstore")
	if got, want := failedIDs(resp), []string{msg.MessageId}; len(got) != 1 || got[0] != want[0] || it.Status != inbox.Failed || sent != 0 || len(f.q.parked) != 0 {
		t.Fatalf("slow attempt: failures %v, status %s (%s), sent %d, parked %v; want the message retried, FAILED, nothing sent or parked",
			got, it.Status, it.LastError, sent, f.q.parked)
	}

	store.until.Store(nil)
	msg.Attributes["ApproximateReceiveCount"] = "2"
	resp, err = h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if err != nil {
		t.Fatal(err)
	}
	if it := f.status(t, "evt_slowstore"); it.Status != inbox.Done || sent != 1 || len(resp.BatchItemFailures) != 0 {
		t.Errorf("next attempt: status %s (%s), sent %d, failures %v; want DONE, sent once", it.Status, it.LastError, sent, failedIDs(resp))
	}
}

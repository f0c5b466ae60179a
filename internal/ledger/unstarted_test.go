package ledger

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestAnAtMostOnceEffectNotStartedIsReleased: when an attempt does not
// call fn after writing its intent (every intent write timed out although
// DynamoDB applied it, or the effect's time ran out meanwhile), it
// releases the intent, so the next attempt sends the email instead of
// parking the event for an outcome that cannot be unknown: nothing went
// out.
func TestAnAtMostOnceEffectNotStartedIsReleased(t *testing.T) {
	// Each fault is asked for every PutItem of the first attempt; cancel
	// ends that attempt's effect context.
	faults := map[string]func(in *dynamodb.PutItemInput, cancel context.CancelFunc) (failNow, lost bool){
		"every intent write applied, its answer lost": func(in *dynamodb.PutItemInput, _ context.CancelFunc) (bool, bool) {
			return isIntent(in), true
		},
		"the effect's time ran out while the intent was written": func(in *dynamodb.PutItemInput, cancel context.CancelFunc) (bool, bool) {
			if isIntent(in) {
				cancel()
			}
			return false, false
		},
	}
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			db, table := dynamoForTest(t)
			key := webhook.NewKey("stripe", "evt_unstarted")
			var faulty atomic.Bool
			faulty.Store(true)
			ctx, cancel := context.WithTimeout(WithRecordDeadline(context.Background(), time.Now().Add(10*time.Second)), 500*time.Millisecond)
			defer cancel()
			l := New(putFaults{db, func(in *dynamodb.PutItemInput) (bool, bool) {
				if !faulty.Load() {
					return false, false
				}
				return fault(in, cancel)
			}}, table, time.Hour)
			sent := 0
			send := func(context.Context, string) (string, error) { sent++; return "msg", nil }
			err := effects.AtMostOnce(ctx, l.For(key), "welcome-email", send)
			if err == nil || errors.Is(err, effects.ErrOutcomeUnknown) || sent != 0 {
				t.Fatalf("first attempt: err = %v, sent %d; want a retryable error and nothing sent", err, sent)
			}
			faulty.Store(false)
			if _, open, err := l.Read(context.Background(), key); err != nil || len(open) != 0 {
				t.Errorf("open intents after the first attempt: %+v, err %v; want none", open, err)
			}
			if err := effects.AtMostOnce(context.Background(), l.For(key), "welcome-email", send); err != nil || sent != 1 {
				t.Errorf("next attempt: err = %v, sent %d; want nil, 1", err, sent)
			}
		})
	}
}

package ledger

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestReadListsOpenIntentsApart: an email whose send timed out
// leaves an open intent; one that was sent and recorded, and one whose
// call was refused (released), do not.
func TestReadListsOpenIntentsApart(t *testing.T) {
	db, table := dynamoForTest(t)
	l := New(db, table, time.Hour)
	ctx := context.Background()
	key := webhook.NewKey("stripe", "evt_open_intent")
	before := time.Now().Add(-time.Second)
	if err := effects.AtMostOnce(ctx, l.For(key), "welcome-email", func(context.Context, string) (string, error) {
		return "", errors.New("ses: i/o timeout")
	}); !errors.Is(err, effects.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
	}
	if err := effects.AtMostOnce(ctx, l.For(key), "receipt-email", func(context.Context, string) (string, error) { return "msg-1", nil }); err != nil {
		t.Fatal(err)
	}
	if err := effects.AtMostOnce(ctx, l.For(key), "refused-email", func(context.Context, string) (string, error) {
		return "", effects.NotDone(errors.New("ses: throttled"))
	}); err == nil {
		t.Fatal("refused-email: want its error")
	}
	recs, open, err := l.Read(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(open) != 1 {
		t.Fatalf("open intents %+v, want the welcome email only", open)
	}
	in := open[0]
	if in.Effect != "welcome-email" || in.Key != key || in.IdempotencyKey != effects.IdempotencyKey(key, "welcome-email") ||
		in.Attempt == "" || in.StartedAt.Before(before) {
		t.Errorf("open intent %+v", in)
	}
	if len(recs) != 1 || recs[0].Effect != "receipt-email" {
		t.Errorf("records %+v; want receipt-email only", recs)
	}
}

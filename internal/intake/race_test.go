package intake_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestADuplicateRacingAFailedIntakeLosesNothing: delivery A claims the
// event, then its payload write or its send fails, and A is answered
// with an error. Delivery B, the provider's retry of A after a timeout,
// arrives between A's claim and A's answer and is answered 200. When
// B's answer is the one the provider records, nothing is delivered
// again: the event must still reach the events queue with its payload,
// at the reconciler's next run. A later delivery (C) sends it at once.
func TestADuplicateRacingAFailedIntakeLosesNothing(t *testing.T) {
	errDown := errors.New("down")
	for _, tc := range []struct {
		name  string
		event func(string) webhook.Event
		fault string // "payload" or "send": the write of A that fails
	}{
		{"inline, send fails", inboxtest.Event, "send"},
		{"payload item, payload write fails", inboxtest.LargeEvent, "payload"},
		{"payload item, send fails", inboxtest.LargeEvent, "send"},
		{"S3 body, PutObject fails", inboxtest.HugeEvent, "payload"},
		{"S3 body, send fails", inboxtest.HugeEvent, "send"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backends(t, func(t *testing.T, real inbox.Store, q *recorder) {
				ctx := context.Background()
				ev := tc.event("evt_race")
				clock := now
				s := &store{Store: real}
				in := intake.New(intake.Config{Now: func() time.Time { return clock }}, s, q, nil)
				claimed := make(chan struct{})
				var once sync.Once
				s.claim = func(ctx context.Context, c inbox.Claim) (inbox.Item, error) {
					it, err := real.Claim(ctx, c)
					once.Do(func() { close(claimed) })
					return it, err
				}
				var b intake.Outcome
				var berr error
				raced := false
				// race runs B once, while A's failing write is under way.
				race := func() {
					if raced {
						return
					}
					raced = true
					<-claimed
					b, berr = in.Accept(ctx, ev)
				}
				s.putPayload = func(ctx context.Context, it inbox.Item, raw []byte) error {
					if tc.fault == "payload" && !raced {
						race()
						return errDown
					}
					return real.PutPayload(ctx, it, raw)
				}
				if tc.fault == "send" {
					q.during = func() { q.fail = false; race(); q.fail = true }
					q.fail = true
				}
				if _, err := in.Accept(ctx, ev); err == nil {
					t.Fatal("A, under the fault: no error")
				}
				q.fail, q.during = false, nil
				if berr != nil || b != intake.Duplicate {
					t.Fatalf("B, racing A = %v, %v; want duplicate (the case of the finding)", b, berr)
				}
				if _, err := real.Payload(ctx, ev.Key()); err != nil {
					t.Fatalf("payload once B is answered 200: %v; want it stored", err)
				}
				// B's 200 is what the provider keeps: only the reconciler
				// sends the event on.
				sent := len(q.sent)
				r := reconcile.New(reconcile.Config{Now: func() time.Time { return now.Add(time.Minute) }, Margin: time.Second}, real, q, nil, nil, nil, nil)
				if _, err := r.Run(ctx); err != nil {
					t.Fatalf("reconciler: %v", err)
				}
				if got := q.sent[sent:]; len(got) != 1 || got[0].Key != ev.Key() || q.seen[len(q.seen)-1] != "claim+payload" {
					t.Fatalf("the reconciler's next run sent %v (inbox %q); want %s, with its claim and payload", got, q.seen, ev.Key())
				}
				if slices.ContainsFunc(q.seen, func(s string) bool { return s != "claim+payload" }) {
					t.Errorf("inbox at each send %q; want claim and payload every time", q.seen)
				}
			})
		})
	}
}

// TestAFailedSendIsSentByTheNextDelivery: a claim whose send failed is
// left RECEIVED and marked unsent, so the provider's next delivery,
// however soon, sends it (once), and is answered only then.
func TestAFailedSendIsSentByTheNextDelivery(t *testing.T) {
	for _, event := range []func(string) webhook.Event{inboxtest.Event, inboxtest.LargeEvent, inboxtest.HugeEvent} {
		backends(t, func(t *testing.T, real inbox.Store, q *recorder) {
			ctx := context.Background()
			clock := now
			in := intake.New(intake.Config{Now: func() time.Time { return clock }}, real, q, nil)
			ev := event("evt_unsent")
			q.fail = true
			if _, err := in.Accept(ctx, ev); err == nil {
				t.Fatal("send failed: no error")
			}
			q.fail = false
			it, err := real.Get(ctx, ev.Key())
			if err != nil || it.Status != inbox.Received {
				t.Fatalf("claim after a failed send = %+v, %v; want it kept in RECEIVED", it, err)
			}
			clock = now.Add(time.Second)
			for i := range 2 {
				if got, err := in.Accept(ctx, ev); err != nil || got != intake.Duplicate {
					t.Fatalf("delivery %d after the failed send = %v, %v; want duplicate", i+2, got, err)
				}
			}
			if want := []string{"claim+payload"}; len(q.sent) != 1 || !slices.Equal(q.seen, want) {
				t.Errorf("sent %v (inbox %q); want one message, with claim and payload", q.sent, q.seen)
			}
		})
	}
}

package replay_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/webhook"
)

// stack is the pipeline (receiver → events queue → processor → DLQ) with
// the DLQ replay function next to it.
type stack struct {
	*pipelinetest.Pipeline
	// replayFn is the DlqReplayFunction exactly as built for Lambda.
	replayFn func(context.Context, replay.Request) (replay.Summary, error)
	// replay is the same handler without the long poll, for speed.
	replay *replay.Handler
}

// noWait is a Config.Wait that does not long-poll: on the local emulators
// a short poll sees every message.
const noWait = -1

// redrive starts SQS's own DLQ redrive ("Start DLQ redrive") from the DLQ
// to the events queue, which cannot mark messages.
func (s *stack) redrive(t *testing.T) {
	t.Helper()
	if _, err := s.SQS.StartMessageMoveTask(context.Background(), &sqs.StartMessageMoveTaskInput{
		SourceArn: aws.String(s.Stack.Queues["EventsDLQ"].ARN), DestinationArn: aws.String(s.Stack.Queues["EventsQueue"].ARN),
	}); err != nil {
		t.Fatal(err)
	}
}

func newStack(t *testing.T) *stack {
	t.Helper()
	p := pipelinetest.New(t)
	return &stack{
		Pipeline: p,
		replayFn: p.Build(t, "DlqReplayFunction", nil).(func(context.Context, replay.Request) (replay.Summary, error)),
		replay:   replay.New(replay.Config{Wait: noWait}, p.Inbox, p.Events, p.DLQ, nil),
	}
}

// poisoned delivers n checkouts while the Stripe API refuses invoices with
// 400 (a permanent error), runs the processor until all n are DEAD, checks
// that the DLQ holds them and nothing else, and returns their keys.
func (s *stack) poisoned(t *testing.T, first, n int) []webhook.Key {
	t.Helper()
	fails := make([]int, n)
	for i := range fails {
		fails[i] = 400
	}
	s.Stripe.FailNext(fails...)
	var keys []webhook.Key
	for i := first; i < first+n; i++ {
		k, body := pipelinetest.Checkout("replay", i, time.Now().Add(-time.Minute))
		s.Deliver(t, body)
		keys = append(keys, k)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, keys, inbox.Dead) })
	parked := s.DLQReasons(t)
	for _, k := range keys {
		if _, ok := parked[k]; !ok || len(parked) != n {
			t.Fatalf("DLQ holds %v, want the %d poisoned events", parked, n)
		}
	}
	return keys
}

// statuses returns each key's status.
func (s *stack) statuses(t *testing.T, keys []webhook.Key) map[webhook.Key]inbox.Status {
	t.Helper()
	got := map[webhook.Key]inbox.Status{}
	for _, k := range keys {
		it, err := s.Inbox.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		got[k] = it.Status
	}
	return got
}

// effectsOnce checks that each of keys sent one email and created one
// invoice, however often it ran, and that the emails carry one
// idempotency key per event.
func (s *stack) effectsOnce(t *testing.T, keys []webhook.Key) {
	t.Helper()
	s.EffectsOnce(t, keys)
	emails := map[string]int{}
	for _, e := range s.SES.Sent() {
		emails[e.Tags["hookinbox-idempotency-key"]]++
	}
	if len(emails) != len(keys) {
		t.Errorf("%d emails to %d idempotency keys, want one per event (%d)", len(s.SES.Sent()), len(emails), len(keys))
	}
}

// park claims a Stripe event id, finishes it DEAD with reason and parks
// it in the DLQ, as the processor does, and returns its key.
func (s *stack) park(t *testing.T, id, reason string) webhook.Key {
	t.Helper()
	ctx, now := context.Background(), time.Now()
	ev := webhook.Event{Provider: "stripe", ID: id, Type: "checkout.session.completed", Created: now, Raw: []byte(`{"id":"` + id + `"}`)}
	it, err := s.Inbox.Claim(ctx, inbox.Claim{Event: ev, At: now, TTL: time.Hour})
	if err == nil {
		err = s.Inbox.PutPayload(ctx, it, ev.Raw)
	}
	if err == nil {
		_, err = s.Inbox.Lease(ctx, it.Key, "w", now, time.Minute)
	}
	if err == nil {
		_, err = s.Inbox.Finish(ctx, it.Key, "w", inbox.Result{Status: inbox.Dead, Error: reason, At: now})
	}
	env := queue.Envelope{Key: it.Key, Type: ev.Type}
	if err == nil {
		err = s.DLQ.Park(ctx, env.Marshal(), env, reason, 1, now)
	}
	if err != nil {
		t.Fatal(err)
	}
	return it.Key
}

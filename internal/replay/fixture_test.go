package replay_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/devstack"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/replay"
	"github.com/hookinbox/hookinbox/internal/standin"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/internal/webhook"
)

const signingSecret = "whsec_replay_test"

// stack is receiver → events queue → processor → DLQ on dynalite and
// local-aws-sqs, with the stand-in SES and Stripe API, every function
// wired by lambdafn from the env template.yaml gives it.
type stack struct {
	st      *devstack.Stack
	sqs     *sqs.Client
	ses     *standin.SES
	stripe  *standin.Stripe
	inbox   *inbox.DynamoDB
	events  *queue.Queue
	dlq     *queue.Queue
	receive func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	// replayFn is the DlqReplayFunction exactly as built for Lambda.
	replayFn func(context.Context, replay.Request) (replay.Summary, error)
	// replay is the same handler without the long poll, for speed.
	replay *replay.Handler
	source *lambdalocal.SQSSource
}

func newStack(t *testing.T) *stack {
	t.Helper()
	emu := devstack.ForTest(t)
	st := devstack.NewTestStack(t)
	s := &stack{st: st, sqs: emu.SQS(), ses: standin.NewSES(), stripe: standin.NewStripe()}
	s.stripe.Key = "sk_test_replay"
	sesSrv, err := standin.Serve(s.ses, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sesSrv.Close)
	stripeSrv, err := standin.Serve(s.stripe, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stripeSrv.Close)
	cfg := emu.AWSConfigFor(devstack.ServiceEndpoints{"SESv2": sesSrv.URL})
	build := func(id string, overrides map[string]string) any {
		env, err := st.FunctionEnv(id)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range overrides {
			env[k] = v
		}
		h, err := lambdafn.Builders[id](context.Background(), cfg, func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("build %s: %v", id, err)
		}
		return h
	}
	s.receive = build("ReceiverFunction", map[string]string{"STRIPE_WEBHOOK_SECRET": signingSecret}).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))
	process := build("ProcessorFunction", map[string]string{"STRIPE_API_KEY": s.stripe.Key, "STRIPE_API_URL": stripeSrv.URL})
	s.replayFn = build("DlqReplayFunction", nil).(func(context.Context, replay.Request) (replay.Summary, error))
	s.inbox = inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"])
	s.events = queue.New(s.sqs, st.Queues["EventsQueue"].URL)
	s.dlq = queue.New(s.sqs, st.Queues["EventsDLQ"].URL)
	s.replay = replay.New(replay.Config{Wait: replay.NoWait}, s.inbox, s.events, s.dlq, nil)
	s.source = &lambdalocal.SQSSource{
		Client: s.sqs, QueueURL: s.events.URL(), QueueARN: st.Queues["EventsQueue"].ARN,
		BatchSize: 10, Function: lambdalocal.InProcess(process),
	}
	return s
}

// checkout returns the key and body of a checkout.session.completed event
// for customer n.
func checkout(n int) (webhook.Key, []byte) {
	id := fmt.Sprintf("evt_replay%05d", n)
	body := verifytest.StripeEvent("checkout.session.completed", id, time.Now().Add(-time.Minute),
		verifytest.WithCustomer(fmt.Sprintf("cus_replay%05d", n)), verifytest.WithEmail(fmt.Sprintf("buyer%d@example.com", n)))
	return webhook.NewKey("stripe", id), body
}

// deliver POSTs body to the receiver, signed now.
func (s *stack) deliver(t *testing.T, body []byte) {
	t.Helper()
	req := events.APIGatewayV2HTTPRequest{
		Headers:        map[string]string{"stripe-signature": verifytest.SignStripe(body, time.Now(), signingSecret)},
		PathParameters: map[string]string{"provider": "stripe"},
		Body:           string(body),
	}
	req.RequestContext.HTTP.Method = "POST"
	resp, err := s.receive(context.Background(), req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("receiver answered %d %s, %v", resp.StatusCode, resp.Body, err)
	}
}

// poisoned delivers n checkouts while the Stripe API refuses invoices with
// 400 (a permanent error), runs the processor until all n are DEAD, and
// returns their keys.
func (s *stack) poisoned(t *testing.T, first, n int) []webhook.Key {
	t.Helper()
	fails := make([]int, n)
	for i := range fails {
		fails[i] = 400
	}
	s.stripe.FailNext(fails...)
	var keys []webhook.Key
	for i := first; i < first+n; i++ {
		k, body := checkout(i)
		s.deliver(t, body)
		keys = append(keys, k)
	}
	s.processUntil(t, func() bool { return s.allIn(t, keys, inbox.Dead) })
	return keys
}

// processUntil feeds the events queue to the processor until done.
func (s *stack) processUntil(t *testing.T, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !done(); {
		if time.Now().After(deadline) {
			t.Fatal("the processor did not get there within 20s")
		}
		if _, err := s.source.PollOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// allIn reports whether every key has status want.
func (s *stack) allIn(t *testing.T, keys []webhook.Key, want inbox.Status) bool {
	t.Helper()
	for _, k := range keys {
		it, err := s.inbox.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		if it.Status != want {
			return false
		}
	}
	return true
}

// statuses returns each key's status.
func (s *stack) statuses(t *testing.T, keys []webhook.Key) map[webhook.Key]inbox.Status {
	t.Helper()
	got := map[webhook.Key]inbox.Status{}
	for _, k := range keys {
		it, err := s.inbox.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		got[k] = it.Status
	}
	return got
}

// peek returns the messages on q (received and made visible again).
func peek(t *testing.T, q *queue.Queue) []queue.Message {
	t.Helper()
	ctx := context.Background()
	var all []queue.Message
	for {
		msgs, err := q.Receive(ctx, queue.MaxReceive, time.Minute, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		all = append(all, msgs...)
	}
	for _, m := range all {
		if err := q.Release(ctx, m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	return all
}

// drain deletes every message on q and returns them.
func drain(t *testing.T, q *queue.Queue) []queue.Message {
	t.Helper()
	ctx := context.Background()
	var all []queue.Message
	for {
		msgs, err := q.Receive(ctx, queue.MaxReceive, time.Minute, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return all
		}
		for _, m := range msgs {
			if err := q.Delete(ctx, m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
		all = append(all, msgs...)
	}
}

// effectsOnce checks that each of keys sent one email and created one
// invoice, however often it ran.
func (s *stack) effectsOnce(t *testing.T, keys []webhook.Key) {
	t.Helper()
	emails := map[string]int{}
	for _, e := range s.ses.Sent() {
		emails[e.Tags["hookinbox-idempotency-key"]]++
	}
	invoices := map[string]map[string]bool{}
	for _, c := range s.stripe.Calls() {
		if c.InvoiceID == "" {
			continue
		}
		if invoices[c.Event] == nil {
			invoices[c.Event] = map[string]bool{}
		}
		invoices[c.Event][c.InvoiceID] = true
	}
	if len(emails) != len(keys) || len(s.ses.Sent()) != len(keys) {
		t.Errorf("%d emails to %d idempotency keys, want one per event (%d)", len(s.ses.Sent()), len(emails), len(keys))
	}
	for _, k := range keys {
		if n := len(invoices[string(k)]); n != 1 {
			t.Errorf("%s: %d invoices, want 1", k, n)
		}
	}
}

package reconcile_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/internal/devstack"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/internal/standin"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/internal/webhook"
)

const (
	signingSecret = "whsec_reconcile_test"
	stripeKey     = "sk_test_reconcile"
)

// stack is receiver → events queue → processor on dynalite and
// local-aws-sqs with the stand-in SES and a stateful Stripe API, every
// function wired by lambdafn from the env template.yaml gives it.
type stack struct {
	st        *devstack.Stack
	db        *dynamodb.Client
	ses       *standin.SES
	stripe    *standin.Stripe
	stripeURL string
	inbox     *inbox.DynamoDB
	events    *queue.Queue
	receive   func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	source    *lambdalocal.SQSSource
	build     func(id string, overrides map[string]string) any
	logs      *syncBuffer // the reconciler's JSON log
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newStack(t *testing.T) *stack {
	t.Helper()
	emu := devstack.ForTest(t)
	st := devstack.NewTestStack(t)
	s := &stack{st: st, db: emu.DynamoDB(), ses: standin.NewSES(), stripe: standin.NewStripe(), logs: &syncBuffer{}}
	s.stripe.Key = stripeKey
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
	s.stripeURL = stripeSrv.URL
	cfg := emu.AWSConfigFor(devstack.ServiceEndpoints{"SESv2": sesSrv.URL})
	s.build = func(id string, overrides map[string]string) any {
		env, err := st.FunctionEnv(id)
		if err != nil {
			t.Fatal(err)
		}
		env["STRIPE_API_KEY"], env["STRIPE_API_URL"] = stripeKey, stripeSrv.URL
		for k, v := range overrides {
			env[k] = v
		}
		log := slog.New(slog.NewJSONHandler(s.logs, nil))
		h, err := lambdafn.Builders[id](context.Background(), cfg, func(k string) string { return env[k] }, log)
		if err != nil {
			t.Fatalf("build %s: %v", id, err)
		}
		return h
	}
	s.receive = s.build("ReceiverFunction", map[string]string{"STRIPE_WEBHOOK_SECRET": signingSecret}).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))
	process := s.build("ProcessorFunction", nil)
	s.inbox = inbox.NewDynamoDB(s.db, st.Tables["InboxTable"])
	s.events = queue.New(emu.SQS(), st.Queues["EventsQueue"].URL)
	s.source = &lambdalocal.SQSSource{
		Client: emu.SQS(), QueueURL: s.events.URL(), QueueARN: st.Queues["EventsQueue"].ARN,
		BatchSize: 10, Function: lambdalocal.InProcess(process),
	}
	return s
}

// reconciler returns the ReconcilerFunction as built for Lambda.
func (s *stack) reconciler(t *testing.T, overrides map[string]string) func(context.Context, events.EventBridgeEvent) (reconcile.Summary, error) {
	t.Helper()
	return s.build("ReconcilerFunction", overrides).(func(context.Context, events.EventBridgeEvent) (reconcile.Summary, error))
}

// checkout returns the key and body of a checkout.session.completed event
// for customer n, created at.
func checkout(n int, at time.Time) (webhook.Key, []byte) {
	id := fmt.Sprintf("evt_recon%05d", n)
	body := verifytest.StripeEvent("checkout.session.completed", id, at,
		verifytest.WithCustomer(fmt.Sprintf("cus_recon%05d", n)), verifytest.WithEmail(fmt.Sprintf("buyer%d@example.com", n)))
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

// allDone reports whether every key is DONE.
func (s *stack) allDone(t *testing.T, keys []webhook.Key) bool {
	t.Helper()
	for _, k := range keys {
		it, err := s.inbox.Get(context.Background(), k)
		if err != nil || it.Status != inbox.Done {
			return false
		}
	}
	return true
}

// queued returns how many messages the events queue holds per key, and
// leaves them there.
func (s *stack) queued(t *testing.T) map[webhook.Key]int {
	t.Helper()
	ctx := context.Background()
	var all []queue.Message
	for {
		msgs, err := s.events.Receive(ctx, queue.MaxReceive, time.Minute, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		all = append(all, msgs...)
	}
	got := map[webhook.Key]int{}
	for _, m := range all {
		env, err := webhook.ParseEnvelope(m.Body)
		if err != nil {
			t.Fatal(err)
		}
		got[env.Key]++
		if err := s.events.Release(ctx, m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// effectsOnce checks that each key sent one email and created one invoice.
func (s *stack) effectsOnce(t *testing.T, keys []webhook.Key) {
	t.Helper()
	if got := len(s.ses.Sent()); got != len(keys) {
		t.Errorf("%d emails sent, want one per event (%d)", got, len(keys))
	}
	invoices := map[string]map[string]bool{}
	for _, c := range s.stripe.Calls() {
		if c.InvoiceID != "" {
			if invoices[c.Event] == nil {
				invoices[c.Event] = map[string]bool{}
			}
			invoices[c.Event][c.InvoiceID] = true
		}
	}
	for _, k := range keys {
		if n := len(invoices[string(k)]); n != 1 {
			t.Errorf("%s: %d invoices, want 1", k, n)
		}
	}
}

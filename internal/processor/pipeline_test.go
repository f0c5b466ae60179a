package processor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookinbox/hookinbox/internal/devstack"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/internal/standin"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/internal/webhook"
)

const signingSecret = "whsec_pipeline_test"

// pipeline is receiver → SQS → processor on dynalite and local-aws-sqs,
// with the stand-in SES and Stripe API, wired by lambdafn exactly as the
// Lambda functions are, from the env template.yaml gives them.
type pipeline struct {
	stack    *devstack.Stack
	emu      *devstack.Emulators
	ses      *standin.SES
	stripe   *standin.Stripe
	receive  func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	process  func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
	source   *lambdalocal.SQSSource
	inbox    *inbox.DynamoDB
	shop     *shop.Shop
	eventsQ  string
	deadQ    string
	clientSQ *sqs.Client
}

func newPipeline(t *testing.T) *pipeline {
	t.Helper()
	emu := devstack.ForTest(t)
	st := devstack.NewTestStack(t)
	p := &pipeline{stack: st, emu: emu, ses: standin.NewSES(), stripe: standin.NewStripe(), clientSQ: emu.SQS()}
	p.stripe.Key = "sk_test_pipeline"
	sesSrv, err := standin.Serve(p.ses, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sesSrv.Close)
	stripeSrv, err := standin.Serve(p.stripe, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stripeSrv.Close)
	cfg := emu.AWSConfigFor(devstack.ServiceEndpoints{"SESv2": sesSrv.URL})
	ctx := context.Background()
	build := func(id string, overrides map[string]string) any {
		env, err := st.FunctionEnv(id)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range overrides {
			env[k] = v
		}
		h, err := lambdafn.Builders[id](ctx, cfg, func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("build %s: %v", id, err)
		}
		return h
	}
	p.receive = build("ReceiverFunction", map[string]string{"STRIPE_WEBHOOK_SECRET": signingSecret}).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))
	p.process = build("ProcessorFunction", map[string]string{"STRIPE_API_KEY": p.stripe.Key, "STRIPE_API_URL": stripeSrv.URL}).(func(context.Context, events.SQSEvent) (events.SQSEventResponse, error))
	p.eventsQ, p.deadQ = st.Queues["EventsQueue"].URL, st.Queues["EventsDLQ"].URL
	p.source = &lambdalocal.SQSSource{Client: p.clientSQ, QueueURL: p.eventsQ, QueueARN: st.Queues["EventsQueue"].ARN, BatchSize: 10, Function: lambdalocal.InProcess(p.process)}
	p.inbox = inbox.NewDynamoDB(emu.DynamoDB(), st.Tables["InboxTable"])
	p.shop = shop.New(shop.Config{Table: st.Tables["ShopTable"], MailFrom: "shop@example.com"}, emu.DynamoDB(), nil, nil)
	return p
}

// deliver POSTs a Stripe event to the receiver, signed now, and returns its answer.
func (p *pipeline) deliver(t *testing.T, body []byte) string {
	t.Helper()
	req := events.APIGatewayV2HTTPRequest{
		Headers:        map[string]string{"stripe-signature": verifytest.SignStripe(body, time.Now(), signingSecret)},
		PathParameters: map[string]string{"provider": "stripe"},
		Body:           string(body),
	}
	req.RequestContext.HTTP.Method = "POST"
	resp, err := p.receive(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Status, Error string }
	_ = json.Unmarshal([]byte(resp.Body), &out)
	if resp.StatusCode != 200 {
		t.Fatalf("receiver answered %d %s", resp.StatusCode, resp.Body)
	}
	return out.Status
}

// runUntil polls the events queue through the processor until done reports
// true, failing the test after the deadline.
func (p *pipeline) runUntil(t *testing.T, within time.Duration, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("pipeline did not settle within %v", within)
		}
		if _, err := p.source.PollOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// allFinished reports whether every key is in a final status.
func (p *pipeline) allFinished(t *testing.T, keys []webhook.Key) bool {
	t.Helper()
	for _, k := range keys {
		it, err := p.inbox.Get(context.Background(), k)
		if err != nil || !it.Status.Final() {
			return false
		}
	}
	return true
}

// dlq returns the messages parked in the DLQ with their reasons.
func (p *pipeline) dlq(t *testing.T) map[webhook.Key]string {
	t.Helper()
	got := map[webhook.Key]string{}
	for {
		out, err := p.clientSQ.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: &p.deadQ, MaxNumberOfMessages: 10, VisibilityTimeout: 60, MessageAttributeNames: []string{"All"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return got
		}
		for _, m := range out.Messages {
			env, err := webhook.ParseEnvelope(aws.ToString(m.Body))
			if err != nil {
				t.Fatalf("DLQ message %q: %v", aws.ToString(m.Body), err)
			}
			got[env.Key] = aws.ToString(m.MessageAttributes["error_reason"].StringValue)
		}
	}
}

func (p *pipeline) state(t *testing.T) shop.State {
	t.Helper()
	st, err := p.shop.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func checkoutEvent(n int, at time.Time, opts ...verifytest.Option) (webhook.Key, []byte) {
	id := fmt.Sprintf("evt_pipe%05d", n)
	opts = append([]verifytest.Option{verifytest.WithCustomer(fmt.Sprintf("cus_pipe%05d", n)), verifytest.WithEmail(fmt.Sprintf("buyer%d@example.com", n))}, opts...)
	return webhook.NewKey("stripe", id), verifytest.StripeEvent("checkout.session.completed", id, at, opts...)
}

func TestPipeline200CheckoutsDeliveredTwiceShuffled(t *testing.T) {
	p := newPipeline(t)
	const n = 200
	var keys []webhook.Key
	var bodies [][]byte
	now := time.Now().Add(-time.Minute)
	for i := 0; i < n; i++ {
		k, b := checkoutEvent(i, now)
		keys = append(keys, k)
		bodies = append(bodies, b, b)
	}
	// A fixed shuffle, so a failure can be rerun as it was.
	perm := shuffled(len(bodies), 20261130)
	answers := map[string]int{}
	for _, i := range perm {
		answers[p.deliver(t, bodies[i])]++
	}
	if answers["accepted"] != n || answers["duplicate"] != n {
		t.Fatalf("answers %v, want %d accepted and %d duplicate", answers, n, n)
	}
	p.runUntil(t, 90*time.Second, func() bool { return p.allFinished(t, keys) })

	for _, k := range keys {
		it, err := p.inbox.Get(context.Background(), k)
		if err != nil || it.Status != inbox.Done {
			t.Fatalf("%s: status %s, err %v; want DONE", k, it.Status, err)
		}
	}
	if got := len(p.ses.Sent()); got != n {
		t.Errorf("emails sent = %d, want %d", got, n)
	}
	idem := map[string]bool{}
	for _, c := range p.stripe.Calls() {
		idem[c.IdempotencyKey] = true
	}
	if len(idem) != n || len(p.stripe.Invoices()) != n {
		t.Errorf("invoice idempotency keys = %d, invoices = %d; want %d each", len(idem), len(p.stripe.Invoices()), n)
	}
	st := p.state(t)
	if len(st.Entitlements) != n || len(st.Emails) != n || len(st.Invoices) != n {
		t.Errorf("shop state: %d entitlements, %d emails, %d invoices; want %d each", len(st.Entitlements), len(st.Emails), len(st.Invoices), n)
	}
	if d := p.dlq(t); len(d) != 0 {
		t.Errorf("DLQ holds %v, want nothing", d)
	}
}

func TestPipelineBatchWithOnePoisonMessage(t *testing.T) {
	p := newPipeline(t)
	now := time.Now().Add(-time.Minute)
	var keys []webhook.Key
	for i := 0; i < 5; i++ {
		k, b := checkoutEvent(i, now)
		keys = append(keys, k)
		p.deliver(t, b)
	}
	p.ses.FailFor("buyer2@example.com", 500) // SES keeps failing for one of them
	batch := p.receiveBatch(t, 5)
	resp, err := p.process(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	if len(failed) != 1 || failed[0] != messageIDOf(batch, keys[2]) {
		t.Fatalf("batch item failures = %v, want only the message of %s", failed, keys[2])
	}
	for i, k := range keys {
		it, _ := p.inbox.Get(context.Background(), k)
		want := inbox.Done
		if i == 2 {
			want = inbox.Failed
		}
		if it.Status != want {
			t.Errorf("%s: status %s, want %s", k, it.Status, want)
		}
	}
}

func TestPipelinePermanentErrorParkedInOneAttempt(t *testing.T) {
	p := newPipeline(t)
	// A guest checkout has no customer: the shop cannot map it.
	body := guestCheckout(t, verifytest.StripeEvent("checkout.session.completed", "evt_guest", time.Now().Add(-time.Minute)))
	p.deliver(t, body)
	key := webhook.Key("stripe#evt_guest")
	p.runUntil(t, 20*time.Second, func() bool { return p.allFinished(t, []webhook.Key{key}) })
	it, _ := p.inbox.Get(context.Background(), key)
	if it.Status != inbox.Dead || it.Attempts != 1 || it.LastError == "" {
		t.Errorf("item: status %s attempts %d last_error %q; want DEAD after 1 attempt with a reason", it.Status, it.Attempts, it.LastError)
	}
	parked := p.dlq(t)
	if reason, ok := parked[key]; !ok || reason != it.LastError {
		t.Errorf("DLQ = %v, want %s with reason %q", parked, key, it.LastError)
	}
	if len(p.ses.Sent()) != 0 || len(p.stripe.Calls()) != 0 {
		t.Errorf("a permanent error ran effects: %d emails, %d invoice calls", len(p.ses.Sent()), len(p.stripe.Calls()))
	}
}

func TestPipelineSubscriptionsInReverseOrder(t *testing.T) {
	p := newPipeline(t)
	base := time.Now().Add(-time.Hour)
	steps := []struct{ typ, status string }{
		{"customer.subscription.created", "active"},
		{"customer.subscription.updated", "past_due"},
		{"customer.subscription.deleted", "canceled"},
	}
	// Deliver and process newest first.
	for i := len(steps) - 1; i >= 0; i-- {
		id := "evt_sub" + strconv.Itoa(i)
		body := verifytest.StripeEvent(steps[i].typ, id, base.Add(time.Duration(i)*time.Minute),
			verifytest.WithCustomer("cus_rev"), verifytest.WithSubscription("sub_rev", steps[i].status))
		p.deliver(t, body)
		p.runUntil(t, 20*time.Second, func() bool { return p.allFinished(t, []webhook.Key{webhook.NewKey("stripe", id)}) })
	}
	st := p.state(t)
	if len(st.Subscriptions) != 1 || st.Subscriptions[0].Status != "canceled" {
		t.Errorf("subscriptions = %+v, want sub_rev canceled", st.Subscriptions)
	}
	if len(st.Entitlements) != 1 || st.Entitlements[0].Active {
		t.Errorf("entitlements = %+v, want cus_rev inactive", st.Entitlements)
	}
}

func TestPipelineSameMessageTwiceAtOnce(t *testing.T) {
	p := newPipeline(t)
	k, body := checkoutEvent(7, time.Now().Add(-time.Minute))
	p.deliver(t, body)
	// SQS delivers the same event twice (at-least-once): a second copy.
	env := webhook.Envelope{Key: k, Type: "checkout.session.completed"}
	if _, err := p.clientSQ.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &p.eventsQ, MessageBody: aws.String(env.Marshal())}); err != nil {
		t.Fatal(err)
	}
	batch := p.receiveBatch(t, 2)
	if _, err := p.process(context.Background(), batch); err != nil { // both copies run concurrently
		t.Fatal(err)
	}
	p.runUntil(t, 20*time.Second, func() bool { return p.allFinished(t, []webhook.Key{k}) })
	if len(p.ses.Sent()) != 1 || len(p.stripe.Invoices()) != 1 {
		t.Errorf("emails %d, invoices %d; want 1 each", len(p.ses.Sent()), len(p.stripe.Invoices()))
	}
}

func TestPipelineAbandonedLeaseTakenOver(t *testing.T) {
	p := newPipeline(t)
	k, body := checkoutEvent(9, time.Now().Add(-time.Minute))
	p.deliver(t, body)
	// A worker leased it 20 minutes ago and died; its 15-minute lease is over.
	if _, err := p.inbox.Lease(context.Background(), k, "dead-worker", time.Now().Add(-20*time.Minute), 15*time.Minute); err != nil {
		t.Fatal(err)
	}
	p.runUntil(t, 20*time.Second, func() bool { return p.allFinished(t, []webhook.Key{k}) })
	it, _ := p.inbox.Get(context.Background(), k)
	if it.Status != inbox.Done || it.Attempts != 2 {
		t.Errorf("status %s attempts %d, want DONE 2", it.Status, it.Attempts)
	}
	if _, err := p.inbox.Finish(context.Background(), k, "dead-worker", inbox.Result{Status: inbox.Failed, Error: "late", At: time.Now()}); err == nil {
		t.Error("the dead worker overwrote the new owner's result")
	}
}

// receiveBatch receives n messages from the events queue as Lambda would pass them.
func (p *pipeline) receiveBatch(t *testing.T, n int) events.SQSEvent {
	t.Helper()
	var batch events.SQSEvent
	deadline := time.Now().Add(10 * time.Second)
	for len(batch.Records) < n && time.Now().Before(deadline) {
		out, err := p.clientSQ.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: &p.eventsQ, MaxNumberOfMessages: int32(n - len(batch.Records)), VisibilityTimeout: 60,
			AttributeNames: []sqstypes.QueueAttributeName{"All"}, //lint:ignore SA1019 local-aws-sqs reads only this field
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			batch.Records = append(batch.Records, events.SQSMessage{
				MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
				Body: aws.ToString(m.Body), Attributes: m.Attributes,
			})
		}
	}
	if len(batch.Records) != n {
		t.Fatalf("received %d messages, want %d", len(batch.Records), n)
	}
	return batch
}

func messageIDOf(batch events.SQSEvent, key webhook.Key) string {
	for _, m := range batch.Records {
		if env, err := webhook.ParseEnvelope(m.Body); err == nil && env.Key == key {
			return m.MessageId
		}
	}
	return ""
}

// shuffled returns a permutation of 0..n-1 from a fixed seed (a simple LCG,
// so the order is the same on every Go version).
func shuffled(n int, seed uint64) []int {
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	for i := n - 1; i > 0; i-- {
		seed = seed*6364136223846793005 + 1442695040888963407
		j := int((seed >> 33) % uint64(i+1))
		perm[i], perm[j] = perm[j], perm[i]
	}
	return perm
}

// guestCheckout returns the checkout event body with "customer": null, as
// Stripe sends a guest checkout.
func guestCheckout(t *testing.T, body []byte) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	ev["data"].(map[string]any)["object"].(map[string]any)["customer"] = nil
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

package processor_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestPipeline200CheckoutsDeliveredTwiceShuffled(t *testing.T) {
	p := pipelinetest.New(t)
	const n = 200
	keys, once := checkouts("pipe", n)
	var bodies [][]byte
	for _, b := range once {
		bodies = append(bodies, b, b)
	}
	// A fixed shuffle, so a failure can be rerun as it was.
	perm := shuffled(len(bodies), 20261130)
	answers := map[string]int{}
	for _, i := range perm {
		answers[p.Deliver(t, bodies[i])]++
	}
	if answers["accepted"] != n || answers["duplicate"] != n {
		t.Fatalf("answers %v, want %d accepted and %d duplicate", answers, n, n)
	}
	p.ProcessUntil(t, 90*time.Second, func() bool { return p.AllFinal(t, keys) })

	for _, k := range keys {
		it, err := p.Inbox.Get(context.Background(), k)
		if err != nil || it.Status != inbox.Done {
			t.Fatalf("%s: status %s, err %v; want DONE", k, it.Status, err)
		}
	}
	if got := len(p.SES.Sent()); got != n {
		t.Errorf("emails sent = %d, want %d", got, n)
	}
	idem := map[string]bool{}
	for _, c := range p.Stripe.Calls() {
		idem[c.IdempotencyKey] = true
	}
	if len(idem) != n || len(p.Stripe.Invoices()) != n {
		t.Errorf("invoice idempotency keys = %d, invoices = %d; want %d each", len(idem), len(p.Stripe.Invoices()), n)
	}
	st := p.State(t)
	if len(st.Entitlements) != n || len(st.Emails) != n || len(st.Invoices) != n {
		t.Errorf("shop state: %d entitlements, %d emails, %d invoices; want %d each", len(st.Entitlements), len(st.Emails), len(st.Invoices), n)
	}
	if d := p.DLQReasons(t); len(d) != 0 {
		t.Errorf("DLQ holds %v, want nothing", d)
	}
}

func TestPipelineBatchWithOnePoisonMessage(t *testing.T) {
	p := pipelinetest.New(t)
	keys := deliverCheckouts(t, p, "pipe", 5)
	p.SES.FailFor("buyer2@example.com", 500) // SES keeps failing for one of them
	batch := p.ReceiveBatch(t, 5)
	resp, err := p.Process(context.Background(), batch)
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
		it, _ := p.Inbox.Get(context.Background(), k)
		want := inbox.Done
		if i == 2 {
			want = inbox.Failed
		}
		if it.Status != want {
			t.Errorf("%s: status %s, want %s", k, it.Status, want)
		}
	}
	lines := p.Metrics(t)
	if got := emf.Sum(lines, metrics.Processed, nil, time.Time{}); got != 4 {
		t.Errorf("Processed = %v, want 4", got)
	}
	if got := emf.Sum(lines, metrics.Failed, map[string]string{metrics.DimEventType: "checkout.session.completed"}, time.Time{}); got != 1 {
		t.Errorf("Failed = %v, want 1", got)
	}
}

func TestPipelinePermanentErrorParkedInOneAttempt(t *testing.T) {
	p := pipelinetest.New(t)
	// A checkout with no email at all: the shop cannot map it.
	body := noEmailCheckout(t, verifytest.StripeEvent("checkout.session.completed", "evt_noemail", time.Now().Add(-time.Minute)))
	p.Deliver(t, body)
	key := webhook.Key("stripe#evt_noemail")
	p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{key}) })
	it, _ := p.Inbox.Get(context.Background(), key)
	if it.Status != inbox.Dead || it.Attempts != 1 || it.LastError == "" {
		t.Errorf("item: status %s attempts %d last_error %q; want DEAD after 1 attempt with a reason", it.Status, it.Attempts, it.LastError)
	}
	parked := p.DLQReasons(t)
	if reason, ok := parked[key]; !ok || reason != it.LastError {
		t.Errorf("DLQ = %v, want %s with reason %q", parked, key, it.LastError)
	}
	if len(p.SES.Sent()) != 0 || len(p.Stripe.Calls()) != 0 {
		t.Errorf("a permanent error ran effects: %d emails, %d invoice calls", len(p.SES.Sent()), len(p.Stripe.Calls()))
	}
}

func TestPipelineSubscriptionsInReverseOrder(t *testing.T) {
	p := pipelinetest.New(t)
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
		p.Deliver(t, body)
		p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{webhook.NewKey("stripe", id)}) })
	}
	st := p.State(t)
	if len(st.Subscriptions) != 1 || st.Subscriptions[0].Status != "canceled" {
		t.Errorf("subscriptions = %+v, want sub_rev canceled", st.Subscriptions)
	}
	if len(st.Entitlements) != 1 || st.Entitlements[0].Active {
		t.Errorf("entitlements = %+v, want cus_rev inactive", st.Entitlements)
	}
}

func TestPipelineSameMessageTwiceAtOnce(t *testing.T) {
	// Two copies race for one lease: a stock moto_server lets both
	// conditional writes win (the harness's serialised moto does not).
	devstacktest.SkipOnMoto(t, devstacktest.ForTest(t), devstack.MotoRacyConditions)
	p := pipelinetest.New(t)
	k, body := pipelinetest.Checkout("pipe", 7, time.Now().Add(-time.Minute))
	p.Deliver(t, body)
	// SQS delivers the same event twice (at-least-once): a second copy.
	env := queue.Envelope{Key: k, Type: "checkout.session.completed"}
	if _, err := p.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(p.Events.URL()), MessageBody: aws.String(env.Marshal())}); err != nil {
		t.Fatal(err)
	}
	batch := p.ReceiveBatch(t, 2)
	if _, err := p.Process(context.Background(), batch); err != nil { // both copies run concurrently
		t.Fatal(err)
	}
	p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{k}) })
	if len(p.SES.Sent()) != 1 || len(p.Stripe.Invoices()) != 1 {
		t.Errorf("emails %d, invoices %d; want 1 each", len(p.SES.Sent()), len(p.Stripe.Invoices()))
	}
}

func TestPipelineAbandonedLeaseTakenOver(t *testing.T) {
	p := pipelinetest.New(t)
	k, body := pipelinetest.Checkout("pipe", 9, time.Now().Add(-time.Minute))
	p.Deliver(t, body)
	// A worker leased it 20 minutes ago and died; its 15-minute lease is over.
	if _, err := p.Inbox.Lease(context.Background(), k, "dead-worker", time.Now().Add(-20*time.Minute), 15*time.Minute); err != nil {
		t.Fatal(err)
	}
	p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{k}) })
	it, _ := p.Inbox.Get(context.Background(), k)
	if it.Status != inbox.Done || it.Attempts != 2 {
		t.Errorf("status %s attempts %d, want DONE 2", it.Status, it.Attempts)
	}
	if _, err := p.Inbox.Finish(context.Background(), k, "dead-worker", inbox.Result{Status: inbox.Failed, Error: "late", At: time.Now()}); err == nil {
		t.Error("the dead worker overwrote the new owner's result")
	}
	if got := emf.Sum(p.Metrics(t), metrics.LeaseTakeovers, map[string]string{metrics.DimProvider: "stripe"}, time.Time{}); got != 1 {
		t.Errorf("LeaseTakeovers = %v, want 1", got)
	}
	if !strings.Contains(p.Logs.String(), `"from":"dead-worker"`) {
		t.Errorf("no log line names the worker whose lease was taken over")
	}
}

func messageIDOf(batch events.SQSEvent, key webhook.Key) string {
	for _, m := range batch.Records {
		if env, err := queue.ParseEnvelope(m.Body); err == nil && env.Key == key {
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

// noEmailCheckout returns the checkout event body with no customer and no
// email: nobody to fulfil it for.
func noEmailCheckout(t *testing.T, body []byte) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	obj := ev["data"].(map[string]any)["object"].(map[string]any)
	obj["customer"], obj["customer_details"], obj["customer_email"] = nil, nil, nil
	out, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPipeline200CheckoutsEveryMessageDuplicated: SQS delivers at least
// once, so every queued message comes twice, the copy right behind the
// original (the two often land in one batch and run at once). The queue
// drains in one pass: a copy that finds its twin's lease waits for it and
// is acknowledged, instead of coming back after a visibility timeout.
func TestPipeline200CheckoutsEveryMessageDuplicated(t *testing.T) {
	// Twins lease one item at the same moment: a stock moto_server lets
	// both win (the harness's serialised moto does not).
	emu := devstacktest.ForTest(t)
	devstacktest.SkipOnMoto(t, emu, devstack.MotoRacyConditions)
	// Bounded, and well below the queue's 180 s visibility timeout: a copy
	// left to it would not be back in time. moto takes about 80 s for the
	// 400 messages, dynalite under 10 s.
	within := 60 * time.Second
	if emu.Family == devstack.FamilyMoto {
		within = 170 * time.Second
	}
	p := pipelinetest.New(t)
	keys, bodies := checkouts("dup", 200)
	for i, b := range bodies {
		k := keys[i]
		if got := p.Deliver(t, b); got != "accepted" {
			t.Fatalf("%s: receiver answered %q, want accepted", k, got)
		}
		if err := p.Events.Send(context.Background(), queue.Envelope{Key: k, Type: "checkout.session.completed"}); err != nil {
			t.Fatal(err)
		}
	}
	p.ProcessUntil(t, within, func() bool { return p.AllIn(t, keys, inbox.Done) && p.QueueEmpty(t) })

	for _, k := range keys {
		if it, err := p.Inbox.Get(context.Background(), k); err != nil || it.Status != inbox.Done || it.Attempts != 1 {
			t.Fatalf("%s: status %s attempts %d (%v); want DONE after 1 attempt", k, it.Status, it.Attempts, err)
		}
	}
	p.EffectsOnce(t, keys)
	if d := p.DLQReasons(t); len(d) != 0 {
		t.Errorf("DLQ holds %v, want nothing", d)
	}
}

// TestPipelineMissingPayloadFetchedFromStripe: an unfinished event whose
// payload item is gone (a receiver that died between claim and payload
// write, before the payload was written with the claim) is fetched from
// Stripe's GET /v1/events/{id}, stored back, and run.
func TestPipelineMissingPayloadFetchedFromStripe(t *testing.T) {
	p := pipelinetest.New(t)
	k, body := pipelinetest.Checkout("nopay", 1, time.Now().Add(-time.Minute))
	p.Deliver(t, body)
	if err := p.Stripe.AddEvent(body); err != nil {
		t.Fatal(err)
	}
	_, err := p.DynamoDB.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{
		TableName: aws.String(p.Stack.Tables["InboxTable"]),
		Key: map[string]ddbtypes.AttributeValue{
			"pk": &ddbtypes.AttributeValueMemberS{Value: string(k)},
			"sk": &ddbtypes.AttributeValueMemberS{Value: inbox.SortPayload},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{k}) })
	if it, _ := p.Inbox.Get(context.Background(), k); it.Status != inbox.Done {
		t.Errorf("status %s (%s), want DONE", it.Status, it.LastError)
	}
	if raw, err := p.Inbox.Payload(context.Background(), k); err != nil || string(raw) != string(body) {
		t.Errorf("payload after the run: %.40s... %v; want the fetched event stored back", raw, err)
	}
	p.EffectsOnce(t, []webhook.Key{k})
}

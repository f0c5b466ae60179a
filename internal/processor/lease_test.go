package processor_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/inbox/inboxtest"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/webhook"
)

// accessDenied is what the AWS SDK returns when IAM does not let the
// processor write the inbox table.
var accessDenied = &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "UpdateItem",
	Err: &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: http.StatusBadRequest}},
		Err: &smithy.GenericAPIError{Code: "AccessDeniedException",
			Message: "User: arn:aws:sts::123456789012:assumed-role/processor/fn is not authorized to perform: dynamodb:UpdateItem"},
	}}}

// TestRefusedLeaseIsParkedWithItsReason: a lease the inbox store refuses
// for a reason waiting does not change (here access denied) parks the
// event at once with that reason, for the DLQ alarm and a person, rather
// than putting the message back until SQS's redrive moves it without one.
// Nothing runs, and the claim, never leased, stays pending for the
// reconciler or a replay once the store lets the processor in.
func TestRefusedLeaseIsParkedWithItsReason(t *testing.T) {
	f := newFixture(t)
	store := &flakyStore{Memory: f.store, leaseErr: accessDenied}
	h := processor.New(processor.Config{Now: f.now, Jitter: func() float64 { return 0.5 }}, store, f.ledger, f.biz, f.q, f.q, nil)
	msg := f.claim(t, "evt_denied", "checkout.session.completed")
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 0 || len(f.q.delays) != 0 || len(f.q.resent) != 0 {
		t.Errorf("failures %v, delays %v, sent again %v; want the message acknowledged", failedIDs(resp), f.q.delays, f.q.resent)
	}
	if len(f.q.parked) != 1 || !strings.Contains(f.q.parked[0].Reason, "AccessDeniedException") ||
		f.q.parked[0].Body != (queue.Envelope{Key: webhook.NewKey("stripe", "evt_denied"), Type: "checkout.session.completed"}).Marshal() {
		t.Fatalf("parked %+v, want the envelope once with the access denied reason", f.q.parked)
	}
	if runs := f.biz.Runs(); len(runs) != 0 {
		t.Errorf("effects ran %v without a lease", runs)
	}
	f.wantStatus(t, "evt_denied", inbox.Received, 0)
}

// TestUndecodableItemIsParkedWithItsReason: on dynalite, a claim whose
// stored item cannot be decoded (a received_at that is not a time) is
// parked by the processor at its first receive, with the decoding error
// as the reason, and marked DEAD; nothing runs.
func TestUndecodableItemIsParkedWithItsReason(t *testing.T) {
	ctx := context.Background()
	p := pipelinetest.New(t)
	key, body := pipelinetest.Checkout("undecodable", 0, time.Now().Add(-time.Minute))
	p.Deliver(t, body)
	table := p.Stack.Tables["InboxTable"]
	itemKey := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: string(key)},
		"sk": &types.AttributeValueMemberS{Value: inbox.SortEvent},
	}
	if _, err := p.DynamoDB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: itemKey,
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		UpdateExpression:          aws.String("SET received_at = :bad"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":bad": &types.AttributeValueMemberS{Value: "yesterday"}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Inbox.Get(ctx, key); err == nil {
		t.Fatal("the item still decodes; the test needs one that does not")
	}
	p.ProcessUntil(t, 20*time.Second, func() bool { return len(p.DLQReasons(t)) > 0 })
	reasons := p.DLQReasons(t)
	if len(reasons) != 1 || !strings.Contains(reasons[key], "received_at") {
		t.Errorf("DLQ holds %v, want %s with the decoding error as its reason", reasons, key)
	}
	out, err := p.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: itemKey, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := out.Item["status"].(*types.AttributeValueMemberS); st == nil || st.Value != string(inbox.Dead) {
		t.Errorf("stored status %v, want DEAD", out.Item["status"])
	}
	if len(p.SES.Sent()) != 0 || len(p.Stripe.Calls()) != 0 {
		t.Errorf("an unreadable claim ran effects: %d emails, %d invoice calls", len(p.SES.Sent()), len(p.Stripe.Calls()))
	}
	if !p.QueueEmpty(t) {
		t.Error("the events queue still holds the message")
	}
}

// stalledStore is the in-memory inbox whose Lease waits for the context
// to end and returns its error, bare.
type stalledStore struct{ *inboxtest.Memory }

func (s stalledStore) Lease(ctx context.Context, _ webhook.Key, _ string, _ time.Time, _ time.Duration) (inbox.Item, error) {
	<-ctx.Done()
	return inbox.Item{}, ctx.Err()
}

// TestLeaseCutShortByTheDeadlineIsNotParked: a lease call the
// invocation's deadline ends was refused by nobody: the message comes back
// shortly, nothing is parked.
func TestLeaseCutShortByTheDeadlineIsNotParked(t *testing.T) {
	f := newFixture(t)
	h := processor.New(processor.Config{Now: f.now, Jitter: func() float64 { return 0.5 }, Budget: 50 * time.Millisecond, Reserve: 20 * time.Millisecond},
		stalledStore{f.store}, f.ledger, f.biz, f.q, f.q, nil)
	msg := f.claim(t, "evt_stalled", "checkout.session.completed")
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.q.parked) != 0 {
		t.Errorf("parked %+v; a lease cut short by the deadline is not a refusal", f.q.parked)
	}
	if len(resp.BatchItemFailures) != 1 || f.q.delays[msg.ReceiptHandle] != 2*time.Second {
		t.Errorf("failures %v, delay %v; want the message back shortly (2s)", failedIDs(resp), f.q.delays[msg.ReceiptHandle])
	}
}

// TestCopyRacingAFailedAttemptComesBack: SQS delivers an event's message
// twice; the twin holds the lease, and the copy's lease is refused. Before
// the store reads the event back (dynalite returns no item with the
// refusal), the twin finishes its attempt FAILED (SES throttled). The
// copy's refusal is a race: it comes back after a backoff, nothing is
// parked, the event stays FAILED for its retry, and no error wraps nothing.
func TestCopyRacingAFailedAttemptComesBack(t *testing.T) {
	ctx := context.Background()
	emu := devstacktest.ForTest(t)
	db := &inboxtest.Racing{Client: emu.DynamoDB()}
	store := inbox.NewDynamoDB(db, devstacktest.NewTestStack(t).Tables["InboxTable"])
	f := newFixture(t)
	var logs bytes.Buffer
	h := processor.New(processor.Config{Now: f.now, Jitter: func() float64 { return 0.5 }, HeldWait: 50 * time.Millisecond},
		store, f.ledger, f.biz, f.q, f.q, slog.New(slog.NewJSONHandler(&logs, nil)))
	ev := webhook.Event{Provider: "stripe", ID: "evt_twin", Type: "checkout.session.completed", Created: t0, Raw: []byte(`{"id":"evt_twin"}`)}
	if _, err := store.Claim(ctx, inbox.Claim{Event: ev, At: t0, TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Lease(ctx, ev.Key(), "twin", t0, time.Minute); err != nil {
		t.Fatal(err)
	}
	db.Between(func() {
		if _, err := store.Finish(ctx, ev.Key(), "twin", inbox.Result{Status: inbox.Failed, Error: "ses: throttled", At: t0}); err != nil {
			t.Errorf("the twin's Finish: %v", err)
		}
	})
	msg := message("evt_twin", queue.Envelope{Key: ev.Key(), Type: ev.Type}.Marshal(), 1)
	resp, err := h.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{msg}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.q.parked) != 0 {
		t.Errorf("parked %+v; a copy racing its twin's failed attempt comes back", f.q.parked)
	}
	if len(resp.BatchItemFailures) != 1 || f.q.delays[msg.ReceiptHandle] <= 0 {
		t.Errorf("failures %v, delay %v; want the copy back after a backoff", failedIDs(resp), f.q.delays[msg.ReceiptHandle])
	}
	if it, err := store.Get(ctx, ev.Key()); err != nil || it.Status != inbox.Failed {
		t.Errorf("event %s (%v); want FAILED, waiting for its retry", it.Status, err)
	}
	if strings.Contains(logs.String(), "%!") {
		t.Errorf("log wraps nothing:\n%s", logs.String())
	}
}

// TestLeaseRefusedWithoutCauseIsParkedAtLast: a lease refused on every
// try while the event reads back leasable (ErrLeaseRaced) is a race when
// it passes; one that lasts to the last receive SQS allows is not. Such
// a message comes back on earlier receives, and on the last one is
// parked with its reason, never sent again fresh for ever.
func TestLeaseRefusedWithoutCauseIsParkedAtLast(t *testing.T) {
	f := newFixture(t)
	store := &flakyStore{Memory: f.store, leaseErr: fmt.Errorf("lease stripe#evt_spin: %w", inbox.ErrLeaseRaced)}
	h := processor.New(processor.Config{Now: f.now, Jitter: func() float64 { return 0.5 }, HeldWait: 10 * time.Millisecond},
		store, f.ledger, f.biz, f.q, f.q, nil)
	f.claim(t, "evt_spin", "checkout.session.completed")
	body := queue.Envelope{Key: webhook.NewKey("stripe", "evt_spin"), Type: "checkout.session.completed"}.Marshal()
	for receives := 1; receives <= 5; receives++ {
		resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{message("evt_spin", body, receives)}})
		if err != nil {
			t.Fatal(err)
		}
		if receives < 5 && (len(resp.BatchItemFailures) != 1 || len(f.q.parked) != 0) {
			t.Fatalf("receive %d: failures %v, parked %+v; want the message back", receives, failedIDs(resp), f.q.parked)
		}
	}
	if len(f.q.resent) != 0 || len(f.q.parked) != 1 || !strings.Contains(f.q.parked[0].Reason, "event changed while it was being leased") {
		t.Errorf("last receive: sent again %v, parked %+v; want parked with the refusal, not sent again", f.q.resent, f.q.parked)
	}
	if runs := f.biz.Runs(); len(runs) != 0 {
		t.Errorf("effects ran %v without a lease", runs)
	}
}

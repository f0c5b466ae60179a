package mollie_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/providers/mollie"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/webhook"
)

// notify sends Mollie's notification of payment id to the receiver, on
// Mollie's own route (POST /webhooks/mollie), and returns its answer.
func notify(t *testing.T, p *pipelinetest.Pipeline, id string) (int, string) {
	t.Helper()
	body, header := mollie.Notify(id)
	req := lambdalocal.WebhookEvent("mollie", http.MethodPost, header, body)
	req.RouteKey, req.PathParameters = "POST /webhooks/mollie", nil
	resp := p.Send(t, req)
	var out struct{ Status string }
	_ = json.Unmarshal([]byte(resp.Body), &out)
	return resp.StatusCode, out.Status
}

func finished(t *testing.T, p *pipelinetest.Pipeline, key webhook.Key) func() bool {
	return func() bool {
		it, err := p.Inbox.Get(context.Background(), key)
		return err == nil && (it.Status == inbox.Done || it.Status == inbox.Ignored || it.Status == inbox.Dead)
	}
}

// TestEndToEnd runs Mollie's notifications through the receiver, the
// events queue and the processor on the emulators, the payment fetched
// from the Mollie stand-in with the local API key: an open payment ends
// IGNORED and marks nothing; paid, its next notification marks the order
// paid; a repeated notification is a duplicate while the first is
// unfinished and, after it, fetches again and changes nothing.
func TestEndToEnd(t *testing.T) {
	p := pipelinetest.New(t)
	pay := paidPayment(t)
	key := webhook.Key("mollie#" + pay.ID)
	open := pay
	open.Status, open.PaidAt = "open", ""
	p.Stack.Mollie.SetPayment(open)

	if code, status := notify(t, p, pay.ID); code != 200 || status != "accepted" {
		t.Fatalf("first notification: %d %s, want 200 accepted", code, status)
	}
	p.ProcessUntil(t, 30*time.Second, finished(t, p, key))
	if it, _ := p.Inbox.Get(context.Background(), key); it.Status != inbox.Ignored {
		t.Errorf("open payment: %s, want IGNORED", it.Status)
	}

	p.Stack.Mollie.SetPayment(pay) // paid, then Mollie notifies
	for i, want := range []string{"accepted", "duplicate"} {
		if code, status := notify(t, p, pay.ID); code != 200 || status != want {
			t.Errorf("paid notification %d: %d %s, want 200 %s", i+1, code, status, want)
		}
	}
	p.ProcessUntil(t, 30*time.Second, finished(t, p, key))
	if code, status := notify(t, p, pay.ID); code != 200 || status != "accepted" {
		t.Errorf("notification after it finished: %d %s, want 200 accepted (fetched again)", code, status)
	}
	p.ProcessUntil(t, 30*time.Second, finished(t, p, key))

	if it, _ := p.Inbox.Get(context.Background(), key); it.Status != inbox.Done {
		t.Errorf("paid payment: %s, want DONE", it.Status)
	}
	st, err := p.Shop.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []shop.Order{{Provider: "mollie", Payment: pay.ID, Reference: "order-2024", Status: shop.OrderPaid, Amount: 7500, Currency: "EUR"}}
	if len(st.Orders) != 1 || st.Orders[0] != want[0] {
		t.Errorf("orders %+v, want %+v", st.Orders, want)
	}
	recs, err := ledger.New(p.DynamoDB, p.Stack.Tables["InboxTable"], 0).Records(context.Background(), key)
	if err != nil || len(recs) != 1 || recs[0].Result != "applied" {
		t.Errorf("effects %+v, %v; want one mark-order-paid, run once", recs, err)
	}
	if got := p.Stack.Mollie.Fetches(pay.ID); got != 3 {
		t.Errorf("the payment was fetched %d times, want 3 (once per processed notification)", got)
	}
}

// TestPaymentMollieDoesNotKnowIsIgnored: a made-up id of the right shape
// is claimed, fetched NOT_FOUND_TRIES times (Mollie answers 404), then
// IGNORED, never parked; a notification of it within NOT_FOUND_WINDOW is a
// duplicate, not fetched again.
func TestPaymentMollieDoesNotKnowIsIgnored(t *testing.T) {
	p := pipelinetest.NewWith(t, pipelinetest.Options{ProcessorEnv: map[string]string{"BACKOFF_MAX": "1s"}})
	const id = "tr_madeUp00001"
	key := webhook.Key("mollie#" + id)
	if code, status := notify(t, p, id); code != 200 || status != "accepted" {
		t.Fatalf("notification: %d %s, want 200 accepted", code, status)
	}
	p.ProcessUntil(t, 60*time.Second, finished(t, p, key))
	it, err := p.Inbox.Get(context.Background(), key)
	if err != nil || it.Status != inbox.Ignored || it.Outcome != "not found at mollie" {
		t.Errorf("%s: %s %q (%v), want IGNORED, not found at mollie", key, it.Status, it.Outcome, err)
	}
	if got := p.Stack.Mollie.Fetches(id); got != 2 {
		t.Errorf("fetched %d times, want 2 (NOT_FOUND_TRIES)", got)
	}
	if code, status := notify(t, p, id); code != 200 || status != "duplicate" {
		t.Errorf("notification within the window: %d %s, want 200 duplicate", code, status)
	}
	if n, err := dlqMessages(p); n != 0 || err != nil {
		t.Errorf("%d messages in the DLQ (%v), want none", n, err)
	}
}

// dlqMessages counts the messages a receive from the DLQ returns.
func dlqMessages(p *pipelinetest.Pipeline) (int, error) {
	out, err := p.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(p.DLQ.URL()), MaxNumberOfMessages: 10})
	if err != nil {
		return 0, err
	}
	return len(out.Messages), nil
}

// TestIDsMollieCannotIssueChangeNothing: a notification whose id is not a
// Mollie payment id is refused with 400 before any write: no inbox item,
// no message, no fetch.
func TestIDsMollieCannotIssueChangeNothing(t *testing.T) {
	p := pipelinetest.New(t)
	for _, id := range []string{"", "tr_", "ord_kEn1PlbGa", "TR_WDqYK6vllg", "tr_WDqYK6vllg#paid", "tr_../../v2/customers",
		"tr_" + strings.Repeat("a", 30), "tr_WDqYK_6vllg", "tr_WDqYK6vllé"} {
		if code, _ := notify(t, p, id); code != http.StatusBadRequest {
			t.Errorf("id %q: status %d, want 400", id, code)
		}
	}
	out, err := p.DynamoDB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(p.Stack.Tables["InboxTable"])})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 0 {
		t.Errorf("refused ids wrote %d inbox items, want none", len(out.Items))
	}
	if n, err := p.Source.PollOnce(context.Background()); n != 0 || err != nil {
		t.Errorf("refused ids sent %d messages (%v), want none", n, err)
	}
	// The longest id Mollie issues is claimed as usual.
	if code, status := notify(t, p, "tr_"+strings.Repeat("a", 29)); code != 200 || status != "accepted" {
		t.Errorf("a 32-character id: %d %s, want 200 accepted", code, status)
	}
	if _, err := p.Inbox.Get(context.Background(), "mollie#tr_"+webhook.Key(strings.Repeat("a", 29))); errors.Is(err, inbox.ErrNotFound) {
		t.Error("a 32-character id was not claimed")
	}
}

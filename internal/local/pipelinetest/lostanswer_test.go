package pipelinetest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/local/lostanswer"
)

// TestClaimWhoseAnswerWasLostIsAcceptedOnce: DynamoDB applies the claim,
// then the connection closes before its answer. The SDK sends the claim
// again, DynamoDB refuses it (the item exists), and the store must see
// from the SDK's retry metadata and the stored item's marks that the claim
// is its own: the delivery is accepted with exactly one message, never
// answered "duplicate" with no message (which would end the provider's
// retries and leave the event to the reconciler).
func TestClaimWhoseAnswerWasLostIsAcceptedOnce(t *testing.T) {
	p := New(t)
	lost := lostanswer.Start(t, p.Stack.Emulators.DynamoDBURL)
	receive := p.Build(t, "ReceiverFunction", map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": lost.URL}).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))
	lost.LoseNth(1) // the claim: a checkout's payload and its subjects ride in it
	key, body := Checkout("lost", 1, time.Now())
	status := func() string {
		t.Helper()
		resp, err := receive(context.Background(), p.Stack.StripeRequest(body))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("receiver answered %d %s, %v; want 200", resp.StatusCode, resp.Body, err)
		}
		var out struct{ Status string }
		json.Unmarshal([]byte(resp.Body), &out)
		return out.Status
	}
	if got := status(); got != "accepted" {
		t.Errorf("delivery whose claim's answer was lost: %q, want accepted", got)
	}
	if writes, dropped := lost.Count(); dropped != 1 || writes != 2 {
		t.Fatalf("proxy: %d answers lost, %d writes; want the claim's answer lost, the claim sent twice, nothing more", dropped, writes)
	}
	if got := status(); got != "duplicate" {
		t.Errorf("the provider's retry: %q, want duplicate", got)
	}
	msgs := Peek(t, p.Events)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Body, string(key)) {
		t.Errorf("events queue holds %d messages %v, want exactly one for %s", len(msgs), msgs, key)
	}
	it, err := p.Inbox.Get(context.Background(), key)
	if err != nil || it.Status != "RECEIVED" || len(it.Subjects) != 2 {
		t.Errorf("claim %+v, %v; want it RECEIVED, with its customer's and email's hashes", it, err)
	}
}

package pipelinetest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestClaimKeptWhenTheQueueRefuses: a claim whose message SQS refuses is
// kept, marked unsent, and the provider gets a 5xx; its retry is a
// duplicate that sends the claim on at once, and the event ends DONE.
func TestClaimKeptWhenTheQueueRefuses(t *testing.T) {
	p := New(t)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"__type":"com.amazonaws.sqs#AccessDenied","message":"refused by the test"}`))
	}))
	defer refusing.Close()
	receive := p.Build(t, "ReceiverFunction", map[string]string{"AWS_ENDPOINT_URL_SQS": refusing.URL}).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))
	key, body := Checkout("refused", 1, time.Now())
	resp, err := receive(context.Background(), p.Stack.StripeRequest(body))
	if err != nil || resp.StatusCode < 500 {
		t.Fatalf("receiver answered %d %s, %v; want a 5xx", resp.StatusCode, resp.Body, err)
	}
	if it, err := p.Inbox.Get(context.Background(), key); err != nil || it.Status != inbox.Received {
		t.Fatalf("claim of %s after the refused send: %v, %v; want it kept in RECEIVED", key, it.Status, err)
	}
	if resp := p.Send(t, p.Stack.StripeRequest(body)); resp.StatusCode != http.StatusOK {
		t.Fatalf("the provider's retry: %d %s; want 200", resp.StatusCode, resp.Body)
	}
	p.ProcessUntil(t, time.Minute, func() bool { return p.AllIn(t, []webhook.Key{key}, inbox.Done) })
}

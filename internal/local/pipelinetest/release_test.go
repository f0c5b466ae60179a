package pipelinetest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
)

// TestClaimReleasedWhenTheQueueRefuses: a claim whose message SQS refuses
// is released (the receiver deletes it) and the provider gets a 5xx, so
// its retry claims the event afresh.
func TestClaimReleasedWhenTheQueueRefuses(t *testing.T) {
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
	if _, err := p.Inbox.Get(context.Background(), key); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("claim of %s after the refused send: %v, want it released (ErrNotFound)", key, err)
	}
}

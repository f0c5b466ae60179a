package pipelinetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// answerDropper is an HTTP proxy in front of DynamoDB. It forwards every
// request; for the next drop PutItem requests it reads DynamoDB's answer
// and then closes the client's connection without sending a byte of it:
// the write is applied, the client sees the connection end (EOF).
type answerDropper struct {
	target string
	mu     sync.Mutex
	drop   int
	puts   int // PutItem requests forwarded
}

func (d *answerDropper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, d.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	d.mu.Lock()
	isPut := strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".PutItem")
	lose := isPut && d.drop > 0
	if isPut {
		d.puts++
	}
	if lose {
		d.drop--
	}
	d.mu.Unlock()
	if lose {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	for k, vs := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
}

// TestClaimWhoseAnswerWasLostIsAcceptedOnce: DynamoDB applies the claim,
// then the connection closes before its answer. The SDK sends the claim
// again, DynamoDB refuses it (the item exists), and the store must see
// from the SDK's retry metadata and the stored item's marks that the claim
// is its own: the delivery is accepted with exactly one message, never
// answered "duplicate" with no message (which would end the provider's
// retries and leave the event to the reconciler).
func TestClaimWhoseAnswerWasLostIsAcceptedOnce(t *testing.T) {
	p := New(t)
	d := &answerDropper{target: p.Stack.Emulators.DynamoDBURL, drop: 1}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	receive := p.Build(t, "ReceiverFunction", map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": srv.URL}).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))
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
	if d.drop != 0 || d.puts != 2 {
		t.Fatalf("proxy: %d answers left to drop, %d PutItem requests; want the first answer dropped and the claim sent twice", d.drop, d.puts)
	}
	if got := status(); got != "duplicate" {
		t.Errorf("the provider's retry: %q, want duplicate", got)
	}
	msgs := Peek(t, p.Events)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Body, string(key)) {
		t.Errorf("events queue holds %d messages %v, want exactly one for %s", len(msgs), msgs, key)
	}
	it, err := p.Inbox.Get(context.Background(), key)
	if err != nil || it.Status != "RECEIVED" {
		t.Errorf("claim %+v, %v; want it RECEIVED", it, err)
	}
}

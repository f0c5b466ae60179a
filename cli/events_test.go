package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
)

// TestFunctionEventFixtures invokes functions/receiver/event.json and
// functions/processor/event.json, the events `sam local invoke -e` uses,
// on the real bootstraps under aws-lambda-rie with the stack's environment.
// With -short it only checks the fixtures' signature and keys.
func TestFunctionEventFixtures(t *testing.T) {
	root := repoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	receiverEvent := readEvent(t, filepath.Join(root, "functions", "receiver", "event.json"))
	body, _ := receiverEvent["body"].(string)
	headers, _ := receiverEvent["headers"].(map[string]any)
	sig, _ := headers["stripe-signature"].(string)
	// The stored signature is Stripe's, by the local secret env.json sets,
	// at the time in the header.
	at, err := signatureTime(sig)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := verifytest.StripeVerify(func() time.Time { return at }, pipeline.StripeSecret)(sig, []byte(body))
	if err != nil {
		t.Fatalf("functions/receiver/event.json: the stored stripe-signature does not verify with %s: %v", pipeline.StripeSecret, err)
	}

	t.Run("receiver", func(t *testing.T) {
		p := pipelinetest.New(t)
		fn := p.StartBootstrap(t, "ReceiverFunction", nil)
		// A stored signature goes stale after the tolerance: sign again now.
		headers["stripe-signature"] = stripe.SignatureHeader([]byte(body), time.Now(), pipeline.StripeSecret)
		out, err := fn.Invoke(ctx, mustJSON(t, receiverEvent))
		if err != nil {
			t.Fatal(err)
		}
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			t.Fatalf("response %s: %v", out, err)
		}
		if resp.StatusCode != 200 || !strings.Contains(resp.Body, `"accepted"`) {
			t.Errorf("receiver answered %d %s, want 200 accepted", resp.StatusCode, resp.Body)
		}
		it, err := p.Inbox.Get(ctx, ev.Key())
		if err != nil || it.Status != inbox.Received {
			t.Errorf("inbox item of %s: %+v, %v; want RECEIVED", ev.Key(), it, err)
		}
		// The provider delivers it again: a polite duplicate, no second message.
		headers["stripe-signature"] = stripe.SignatureHeader([]byte(body), time.Now(), pipeline.StripeSecret)
		out, err = fn.Invoke(ctx, mustJSON(t, receiverEvent))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode != 200 || !strings.Contains(resp.Body, `"duplicate"`) {
			t.Errorf("second delivery: %s (%v), want 200 duplicate", out, err)
		}
		msgs, err := p.Events.Receive(ctx, 10, time.Minute, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 {
			t.Errorf("%d messages on the events queue after two deliveries, want 1", len(msgs))
		}
	})

	t.Run("processor", func(t *testing.T) {
		p := pipelinetest.New(t)
		processorEvent := readEvent(t, filepath.Join(root, "functions", "processor", "event.json"))
		var batch events.SQSEvent
		if err := json.Unmarshal(mustJSON(t, processorEvent), &batch); err != nil || len(batch.Records) != 1 {
			t.Fatalf("functions/processor/event.json: want one SQS record: %v", err)
		}
		env, err := queue.ParseEnvelope(batch.Records[0].Body)
		if err != nil || env.Key != ev.Key() {
			t.Fatalf("processor event.json names %q (%v), want the receiver event's %s", env.Key, err, ev.Key())
		}
		// The receiver would have claimed the event and stored its payload.
		store := p.Inbox
		it, err := store.Claim(ctx, inbox.Claim{Event: ev, At: time.Now(), TTL: inbox.DefaultTTL})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.PutPayload(ctx, it, ev.Raw); err != nil {
			t.Fatal(err)
		}
		fn := p.StartBootstrap(t, "ProcessorFunction", nil)
		out, err := fn.Invoke(ctx, mustJSON(t, processorEvent))
		if err != nil {
			t.Fatal(err)
		}
		var resp events.SQSEventResponse
		if err := json.Unmarshal(out, &resp); err != nil || len(resp.BatchItemFailures) != 0 {
			t.Errorf("processor answered %s (%v), want no batch item failures", out, err)
		}
		it, err = store.Get(ctx, ev.Key())
		if err != nil || it.Status != inbox.Done {
			t.Errorf("inbox item after processing: %+v, %v; want DONE", it, err)
		}
		if n, m := len(p.SES.Sent()), len(p.Stripe.Invoices()); n != 1 || m != 1 {
			t.Errorf("%d emails and %d invoices, want 1 and 1", n, m)
		}
	})
}

func readEvent(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// signatureTime returns the t= of a Stripe-Signature header.
func signatureTime(header string) (time.Time, error) {
	for _, part := range strings.Split(header, ",") {
		if v, ok := strings.CutPrefix(part, "t="); ok {
			var sec int64
			if err := json.Unmarshal([]byte(v), &sec); err != nil {
				return time.Time{}, err
			}
			return time.Unix(sec, 0), nil
		}
	}
	return time.Time{}, os.ErrNotExist
}

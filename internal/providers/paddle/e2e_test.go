package paddle_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/providers/paddle"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestEndToEnd runs a Paddle transaction.completed through the receiver,
// the events queue and the processor (the example shop) on the emulators:
// signed with the local secret key it is claimed once and marks its order
// paid once; delivered again it is a duplicate; signed with another key,
// or too long ago, it is refused and writes nothing.
func TestEndToEnd(t *testing.T) {
	p := pipelinetest.New(t)
	body := readFile(t, "transaction.completed.json")
	send := func(at time.Time, secret string) (int, string) {
		t.Helper()
		header := map[string]string{"content-type": "application/json", "paddle-signature": paddle.SignatureHeader(body, at, secret)}
		resp := p.Send(t, lambdalocal.WebhookEvent("paddle", http.MethodPost, header, body))
		var out struct{ Status string }
		_ = json.Unmarshal([]byte(resp.Body), &out)
		return resp.StatusCode, out.Status
	}
	for _, tt := range []struct {
		name   string
		at     time.Time
		secret string
		code   int
	}{
		{"another endpoint's key", time.Now(), oldSecret, http.StatusUnauthorized},
		{"signed 10 minutes ago", time.Now().Add(-10 * time.Minute), pipeline.PaddleSecret, http.StatusUnauthorized},
	} {
		if code, _ := send(tt.at, tt.secret); code != tt.code {
			t.Errorf("%s: %d, want %d", tt.name, code, tt.code)
		}
	}
	out, err := p.DynamoDB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(p.Stack.Tables["InboxTable"])})
	if err != nil || len(out.Items) != 0 {
		t.Fatalf("refused deliveries wrote %d inbox items (%v), want none", len(out.Items), err)
	}

	for i, want := range []string{"accepted", "duplicate"} {
		if code, status := send(time.Now(), pipeline.PaddleSecret); code != 200 || status != want {
			t.Errorf("delivery %d: %d %s, want 200 %s", i+1, code, status, want)
		}
	}
	key := webhook.Key("paddle#evt_01hv8x2acma6xvfynhhb0s8z7c")
	p.ProcessUntil(t, 30*time.Second, func() bool {
		it, err := p.Inbox.Get(context.Background(), key)
		return err == nil && it.Status != inbox.Received && it.Status != inbox.Processing
	})
	it, err := p.Inbox.Get(context.Background(), key)
	if err != nil || it.Status != inbox.Done || it.EventType != "transaction.completed" {
		t.Fatalf("%s: %s %q (%v), want DONE transaction.completed", key, it.Status, it.EventType, err)
	}
	if code, status := send(time.Now(), pipeline.PaddleSecret); code != 200 || status != "duplicate" {
		t.Errorf("delivery after it finished: %d %s, want 200 duplicate", code, status)
	}
	st, err := p.Shop.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := shop.Order{Provider: "paddle", Payment: "txn_01hv8wptq8987qeep44cyrewp9", Reference: "order-1042", Status: shop.OrderPaid, Amount: 3300, Currency: "USD"}
	if len(st.Orders) != 1 || st.Orders[0] != want {
		t.Errorf("orders %+v, want [%+v]", st.Orders, want)
	}
}

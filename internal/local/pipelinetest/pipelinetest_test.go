package pipelinetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestCheckoutDeliveredTwiceIsProcessedOnce(t *testing.T) {
	p := pipelinetest.New(t)
	key, body := pipelinetest.Checkout("ptest", 1, time.Now().Add(-time.Minute))
	if key != "stripe#evt_ptest00001" {
		t.Errorf("Checkout key = %s, want stripe#evt_ptest00001", key)
	}
	if got, want := p.Deliver(t, body), "accepted"; got != want {
		t.Errorf("first delivery: %q, want %q", got, want)
	}
	if got, want := p.Deliver(t, body), "duplicate"; got != want {
		t.Errorf("second delivery: %q, want %q", got, want)
	}
	keys := []webhook.Key{key}
	if p.AllFinal(t, keys) {
		t.Fatal("AllFinal before processing = true, want false")
	}
	p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, keys) })
	if !p.AllIn(t, keys, inbox.Done) {
		t.Errorf("status after processing is not DONE")
	}
	p.EffectsOnce(t, keys)
	if st := p.State(t); len(st.Entitlements) != 1 || len(st.Emails) != 1 || len(st.Invoices) != 1 {
		t.Errorf("shop state %+v, want one entitlement, email and invoice", st)
	}
	if got := p.DLQReasons(t); len(got) != 0 {
		t.Errorf("DLQ = %v, want empty", got)
	}
	if p.AllIn(t, []webhook.Key{"stripe#evt_nobody"}, inbox.Done) {
		t.Error("AllIn of an unclaimed key = true, want false")
	}

	// A delivery signed with another secret (a rotated-away secret).
	req := events.APIGatewayV2HTTPRequest{
		Headers:        map[string]string{"stripe-signature": stripe.SignatureHeader(body, time.Now(), "whsec_someone_else")},
		PathParameters: map[string]string{"provider": "stripe"},
		Body:           string(body),
	}
	req.RequestContext.HTTP.Method = "POST"
	if resp, err := p.Receive(context.Background(), req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("wrong secret: %d %v, want 401", resp.StatusCode, err)
	}

	// The metrics every function wrote, as CloudWatch would read them.
	lines := p.Metrics(t)
	typ := map[string]string{metrics.DimProvider: "stripe", metrics.DimEventType: "checkout.session.completed"}
	for _, want := range []struct {
		name string
		dims map[string]string
		sum  float64
	}{
		{metrics.Received, typ, 2},
		{metrics.Duplicate, typ, 1},
		{metrics.Enqueued, typ, 1},
		{metrics.Processed, typ, 1},
		{metrics.Received, nil, 2},
		{metrics.VerifyFailed, map[string]string{metrics.DimProvider: "stripe", metrics.DimReason: "bad-signature"}, 1},
		{metrics.EffectDuration, map[string]string{metrics.DimEffect: "grant-access"}, -1},
		{metrics.EffectDuration, map[string]string{metrics.DimEffect: "welcome-email"}, -1},
		{metrics.EffectDuration, map[string]string{metrics.DimEffect: "create-invoice"}, -1},
		{metrics.EndToEndAge, typ, -1},
		{metrics.Parked, nil, 0},
		{metrics.Failed, nil, 0},
	} {
		got := emf.Sum(lines, want.name, want.dims, time.Time{})
		if want.sum >= 0 && got != want.sum || want.sum < 0 && got <= 0 {
			t.Errorf("%s %v = %v, want %v (-1: some)", want.name, want.dims, got, want.sum)
		}
	}
	for _, l := range lines {
		if l.Namespace != "hookinbox/"+p.Stack.Name {
			t.Errorf("namespace %q, want the stack's", l.Namespace)
		}
		for name, unit := range l.Units {
			if metrics.Names[name] != unit {
				t.Errorf("%s in %s, want %s", name, unit, metrics.Names[name])
			}
		}
		if _, ok := l.Values[metrics.EndToEndAge]; ok && (l.Values[metrics.EndToEndAge] < 60 || l.Values[metrics.EndToEndAge] > 600) {
			t.Errorf("EndToEndAge %v s for an event created a minute ago", l.Values[metrics.EndToEndAge])
		}
	}
}

func TestPeekLeavesAndDrainDeletes(t *testing.T) {
	p := pipelinetest.New(t)
	ctx := context.Background()
	for _, id := range []string{"evt_a", "evt_b"} {
		if err := p.Events.Send(ctx, queue.Envelope{Key: webhook.NewKey("stripe", id), Type: "checkout.session.completed"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(pipelinetest.Peek(t, p.Events)); got != 2 {
		t.Errorf("Peek: %d messages, want 2", got)
	}
	batch := p.ReceiveBatch(t, 2)
	for _, m := range batch.Records {
		if err := p.Events.Release(ctx, m.ReceiptHandle); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(pipelinetest.Drain(t, p.Events)); got != 2 {
		t.Errorf("Drain: %d messages, want 2", got)
	}
	if got := len(pipelinetest.Peek(t, p.Events)); got != 0 {
		t.Errorf("Peek after Drain: %d messages, want 0", got)
	}
}

func TestSyncBufferConcurrentWriters(t *testing.T) {
	var b pipelinetest.SyncBuffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x\n"))
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "x\n"); got != 800 {
		t.Errorf("%d lines, want 800", got)
	}
}

func TestOneEventIsOneTrace(t *testing.T) {
	p := pipelinetest.New(t)
	const trace = "Root=1-6751f0a1-0123456789abcdef01234567;Parent=53995c3f42cd8ad8;Sampled=1"
	//lint:ignore SA1029 the string key is aws-lambda-go's: the invocation's trace header
	ctx := context.WithValue(context.Background(), "x-amzn-trace-id", trace)
	key, body := pipelinetest.Checkout("trace", 1, time.Now().Add(-time.Minute))
	req := events.APIGatewayV2HTTPRequest{
		Headers:        map[string]string{"stripe-signature": stripe.SignatureHeader(body, time.Now(), pipelinetest.SigningSecret)},
		PathParameters: map[string]string{"provider": "stripe"},
		Body:           string(body),
	}
	req.RequestContext.HTTP.Method = "POST"
	if resp, err := p.Receive(ctx, req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("receiver answered %d, %v", resp.StatusCode, err)
	}
	p.ProcessUntil(t, 20*time.Second, func() bool { return p.AllFinal(t, []webhook.Key{key}) })
	// The receiver's trace travelled in the message's AWSTraceHeader: the
	// processor's lines about the event name it.
	var traced int
	for _, line := range strings.Split(p.Logs.String(), "\n") {
		if strings.Contains(line, `"key":"`+string(key)+`"`) && strings.Contains(line, `"trace_id":"1-6751f0a1-0123456789abcdef01234567"`) {
			traced++
		}
	}
	if traced == 0 {
		t.Errorf("no processor log line about %s carries the receiver's trace:\n%s", key, p.Logs.String())
	}
}

func TestLogsNameTheEventAndNoPerson(t *testing.T) {
	p := pipelinetest.New(t)
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-receiver-1"})
	key, body := pipelinetest.Checkout("logs", 1, time.Now().Add(-time.Minute), verifytest.WithEmail("jenny.rosen@example.com"))
	deliver := func(secret string) int {
		req := events.APIGatewayV2HTTPRequest{
			Headers:        map[string]string{"stripe-signature": stripe.SignatureHeader(body, time.Now(), secret)},
			PathParameters: map[string]string{"provider": "stripe"},
			Body:           string(body),
		}
		req.RequestContext.HTTP.Method = "POST"
		resp, err := p.Receive(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	if got := deliver("whsec_wrong"); got != 401 {
		t.Fatalf("wrong secret answered %d", got)
	}
	if got := deliver(pipelinetest.SigningSecret); got != 200 {
		t.Fatalf("delivery answered %d", got)
	}
	// The welcome email fails once (a FAILED attempt and its retry log too).
	p.SES.FailFor("jenny.rosen@example.com", 500)
	if _, err := p.Source.PollOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.SES.FailFor("jenny.rosen@example.com", 0)
	if err := p.Events.Send(context.Background(), queue.Envelope{Key: key, Type: "checkout.session.completed"}); err != nil {
		t.Fatal(err)
	}
	p.ProcessUntil(t, 30*time.Second, func() bool { return p.AllIn(t, []webhook.Key{key}, inbox.Done) })

	logged := p.Logs.String()
	for _, personal := range []string{"jenny.rosen", "example.com", "Jenny", "Rosen", "cs_test"} {
		if strings.Contains(logged, personal) {
			t.Errorf("the log holds %q:\n%s", personal, logged)
		}
	}
	var withKey, failedAttempts int
	for _, line := range strings.Split(strings.TrimSpace(logged), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if l["key"] == nil {
			continue
		}
		withKey++
		if l["key"] != string(key) || l["provider"] != "stripe" || l["type"] != "checkout.session.completed" || l["request_id"] == nil {
			t.Errorf("line names the event without its key, provider, type or request id: %s", line)
		}
		if strings.Contains(fmt.Sprint(l["msg"]), "FAILED") {
			failedAttempts++
		}
	}
	if withKey < 3 || failedAttempts != 1 {
		t.Errorf("%d lines name the event, %d a failed attempt; want the receiver's and the processor's, one failure:\n%s", withKey, failedAttempts, logged)
	}
	if !strings.Contains(logged, `"request_id":"req-receiver-1"`) {
		t.Errorf("the receiver's lines carry no request id:\n%s", logged)
	}
}

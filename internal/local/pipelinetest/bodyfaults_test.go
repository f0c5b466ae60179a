package pipelinetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/webhook"
)

// faults is a proxy in front of an AWS endpoint that refuses the
// operations it is told to (500, as a service that is down) and forwards
// the rest. An operation is named as the SDK names it: PutItem,
// SendMessage, PutObject, DeleteObject, ...
type faults struct {
	URL   string
	mu    sync.Mutex
	fail  []string
	holds map[string]chan struct{} // an operation held until its channel closes
	held  chan string              // each operation as it is held
}

// startFaults starts a faults proxy in front of upstream, stopped when t
// ends.
func startFaults(t testing.TB, upstream string) *faults {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	f := &faults{holds: map[string]chan struct{}{}, held: make(chan string, 10)}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := operation(r)
		f.mu.Lock()
		refuse, hold := slices.Contains(f.fail, op), f.holds[op]
		f.mu.Unlock()
		if hold != nil {
			f.held <- op
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		if refuse {
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"__type":"InternalServerError","message":"%s refused by the test"}`, op)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// refuse makes the proxy refuse ops from now on (none: it forwards all).
func (f *faults) refuse(ops ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = ops
}

// hold makes the proxy keep op waiting until the returned function is
// called.
func (f *faults) hold(op string) (release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	f.holds[op] = ch
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.holds, op)
		close(ch)
	}
}

// operation names an AWS request as the SDK names its operation: from
// X-Amz-Target (DynamoDB, SQS), or from an S3 object request's method.
func operation(r *http.Request) string {
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		_, op, _ := strings.Cut(target, ".")
		return op
	}
	return map[string]string{http.MethodPut: "PutObject", http.MethodDelete: "DeleteObject", http.MethodGet: "GetObject"}[r.Method]
}

// recordingStack returns a pipeline whose processor runs a recording
// business, and its reconciler, built to re-enqueue every unfinished
// claim at once.
func recordingStack(t *testing.T) (*Pipeline, *recording, func()) {
	t.Helper()
	business := &recording{seen: map[webhook.Key][]string{}}
	p := NewWith(t, Options{Processor: processorfn.Builder(func(context.Context, aws.Config, func(string) string) (processorfn.Business, error) {
		return business, nil
	})})
	run := p.Build(t, "ReconcilerFunction", map[string]string{"STUCK_AFTER": "1ms"}).(func(context.Context, events.EventBridgeEvent) (reconcile.Summary, error))
	return p, business, func() {
		t.Helper()
		if _, err := run(context.Background(), events.EventBridgeEvent{DetailType: "Scheduled Event"}); err != nil {
			t.Logf("reconciler: %v", err) // a source of the stand-ins; the stuck claims are what matters here
		}
	}
}

// stored says what the inbox holds of key: "nothing", "claim with body"
// or "claim without body".
func stored(t *testing.T, p *Pipeline, key webhook.Key) string {
	t.Helper()
	it, err := p.Inbox.Get(context.Background(), key)
	switch {
	case errors.Is(err, inbox.ErrNotFound) && len(objects(t, p, key)) == 0:
		return "nothing"
	case err != nil:
		return "no claim, but objects " + strings.Join(objects(t, p, key), ", ")
	case slices.Contains(objects(t, p, key), it.PayloadObject):
		return "claim with body"
	}
	return "claim without body"
}

// bodyDone checks that key ended DONE with the whole body, handed to the
// business, and that the bucket holds its one object.
func bodyDone(t *testing.T, p *Pipeline, b *recording, key webhook.Key, body []byte) {
	t.Helper()
	p.ProcessUntil(t, 2*time.Minute, func() bool { return p.AllIn(t, []webhook.Key{key}, inbox.Done) })
	sum := inbox.PayloadSHA256(body)
	if got := b.hashes(key); len(got) == 0 || got[len(got)-1] != sum {
		t.Errorf("the business was handed %v; want the whole body (%s) last", got, sum)
	}
	if got, want := objects(t, p, key), []string{inbox.BodyObject(key, sum)}; !slices.Equal(got, want) {
		t.Errorf("objects %v; want %v", got, want)
	}
}

// TestLargeBodySurvivesAFaultAtEveryWrite: a GitHub push too large for an
// item, delivered while one of the receiver's writes fails (or the
// function dies there: every write after it fails too): claim, PutObject,
// SendMessage, and the UpdateItem that marks the claim unsent. The
// delivery is answered 5xx and leaves nothing, or a claim with or
// without its body, never an object without a claim. The provider's next
// delivery is answered 200, and with the reconciler the event ends DONE
// with its body, also when the processor tried it before the body was
// back.
func TestLargeBodySurvivesAFaultAtEveryWrite(t *testing.T) {
	p, business, reconcileNow := recordingStack(t)
	emu := p.Stack.Emulators
	proxies := []*faults{startFaults(t, emu.DynamoDBURL), startFaults(t, emu.SQSURL), startFaults(t, emu.S3URL)}
	faulty := p.Build(t, "ReceiverFunction", map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB": proxies[0].URL, "AWS_ENDPOINT_URL_SQS": proxies[1].URL, "AWS_ENDPOINT_URL_S3": proxies[2].URL,
		"AWS_MAX_ATTEMPTS": "1",
	}).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))
	for i, tc := range []struct {
		name      string
		refuse    []string
		left      string
		processed bool // the reconciler and the processor run before the provider's next delivery
	}{
		{"claim refused", []string{"PutItem"}, "nothing", false},
		{"dies during PutObject", []string{"PutObject", "UpdateItem"}, "claim without body", false},
		{"dies during PutObject, then processed", []string{"PutObject", "UpdateItem"}, "claim without body", true},
		{"PutObject refused, marked unsent", []string{"PutObject"}, "claim without body", false},
		{"PutObject refused, then processed", []string{"PutObject"}, "claim without body", true},
		{"SendMessage refused, marked unsent", []string{"SendMessage"}, "claim with body", false},
		{"dies during SendMessage", []string{"SendMessage", "UpdateItem"}, "claim with body", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("d-fault-%d", i)
			key := webhook.Key("github#" + id)
			body := bigJSON(`"ref":"refs/heads/main","after":"`+id+`"`, inbox.MaxPayloadBytes+1)
			for _, f := range proxies {
				f.refuse(tc.refuse...)
			}
			resp, err := faulty(context.Background(), providerRequest("github", id, body))
			for _, f := range proxies {
				f.refuse()
			}
			if err != nil || resp.StatusCode < 500 {
				t.Fatalf("receiver under the fault answered %d %s, %v; want 5xx", resp.StatusCode, resp.Body, err)
			}
			if got := stored(t, p, key); got != tc.left {
				t.Fatalf("the fault left %s; want %s", got, tc.left)
			}
			for _, m := range Peek(t, p.Events) {
				if strings.Contains(m.Body, `"`+string(key)+`"`) {
					t.Fatalf("events queue holds %s; want nothing sent for %s", m.Body, key)
				}
			}
			if tc.processed {
				reconcileNow()
				p.ProcessUntil(t, time.Minute, func() bool { return p.AllIn(t, []webhook.Key{key}, inbox.Failed) })
			}
			if resp := p.Send(t, providerRequest("github", id, body)); resp.StatusCode != http.StatusOK {
				t.Fatalf("the provider's next delivery: %d %s; want 200", resp.StatusCode, resp.Body)
			}
			reconcileNow()
			bodyDone(t, p, business, key, body)
		})
	}
}

// TestReceiverBootstrapKilledDuringPutObjectLosesNoBody: the real
// receiver bootstrap, under aws-lambda-rie, is SIGKILLed while its
// PutObject of a 6 MB body is on the wire, after its claim was won. The
// provider's next delivery, to the restarted function, writes the body
// again before it is answered, and the reconciler's re-enqueue brings the
// event to DONE with it.
func TestReceiverBootstrapKilledDuringPutObjectLosesNoBody(t *testing.T) {
	p, business, reconcileNow := recordingStack(t)
	s3 := startFaults(t, p.Stack.Emulators.S3URL)
	fn := p.StartBootstrap(t, "ReceiverFunction", map[string]string{"AWS_ENDPOINT_URL_S3": s3.URL})
	const id = "d-killed"
	// Near the most Lambda takes in a request (6 MB with the headers).
	key, body := webhook.Key("github#"+id), bigJSON(`"ref":"refs/heads/main"`, 6_000_000)
	req, err := json.Marshal(providerRequest("github", id, body))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	release := s3.hold("PutObject")
	invoked := make(chan error, 1)
	go func() { _, err := fn.Invoke(ctx, req); invoked <- err }()
	select {
	case <-s3.held:
	case <-ctx.Done():
		t.Fatal("the receiver's PutObject never came")
	}
	if _, err := fn.KillRuntime(); err != nil {
		t.Fatal(err)
	}
	release()
	if err := <-invoked; err == nil {
		t.Fatal("the killed invocation answered")
	}
	if got := stored(t, p, key); got != "claim without body" {
		t.Fatalf("the crash left %s; want a claim without body", got)
	}

	out, err := fn.Invoke(ctx, req)
	var resp events.APIGatewayV2HTTPResponse
	if err != nil || json.Unmarshal(out, &resp) != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the provider's next delivery: %s, %v; want 200", out, err)
	}
	if got := stored(t, p, key); got != "claim with body" {
		t.Fatalf("once the next delivery is answered the inbox holds %s; want the claim with its body", got)
	}
	reconcileNow()
	bodyDone(t, p, business, key, body)
}

// TestHugeStripeBodyFetchedAgainIsReadBack: the object of a checkout too
// large for an item is lost. The processor fetches the event from
// Stripe's API, which renders it with other bytes, and stores them under
// their own hash, named by the claim: the event ends DONE with the API's
// body, and every later read of it checks out.
func TestHugeStripeBodyFetchedAgainIsReadBack(t *testing.T) {
	p, business, _ := recordingStack(t)
	key, _, api, _ := hugeCheckoutFetchedAgain(t, p, "hugefetch")
	bodyDone(t, p, business, key, api)
	if raw, err := p.Inbox.Payload(context.Background(), key); err != nil || string(raw) != string(api) {
		t.Errorf("Payload = %d bytes, %v; want the API's %d", len(raw), err, len(api))
	}
}

// hugeCheckoutFetchedAgain delivers a checkout too large for an item,
// deletes its object (lost), and has Stripe's API serve the same event
// with other bytes: it returns the event's key, the delivered and the
// API's bytes, and the name of the object lost.
func hugeCheckoutFetchedAgain(t *testing.T, p *Pipeline, prefix string) (key webhook.Key, delivered, api []byte, lost string) {
	t.Helper()
	key, checkout := Checkout(prefix, 1, time.Now())
	var ev map[string]any
	if err := json.Unmarshal(checkout, &ev); err != nil {
		t.Fatal(err)
	}
	ev["data"].(map[string]any)["object"].(map[string]any)["metadata"] = map[string]string{"note": strings.Repeat("a", inbox.MaxPayloadBytes)}
	delivered, err := json.MarshalIndent(ev, "", "  ")
	if err == nil {
		api, err = json.Marshal(ev) // the same event, compact: other bytes
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Deliver(t, delivered); got != "accepted" {
		t.Fatalf("delivery: %s", got)
	}
	names := objects(t, p, key)
	if len(names) != 1 {
		t.Fatalf("objects of %s: %v, want one", key, names)
	}
	if _, err := p.Stack.Emulators.S3().DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(p.Stack.Buckets["BodyBucket"]), Key: aws.String(names[0])}); err != nil {
		t.Fatal(err)
	}
	if err := p.Stripe.AddEvent(api); err != nil {
		t.Fatal(err)
	}
	return key, delivered, api, names[0]
}

// TestAnErasureTakesEveryObjectOfItsEvent: a checkout too large for an
// item whose object was lost is fetched again from Stripe's API and kept
// under its own hash; then the receiver's own PutObject of the
// delivered bytes, held up on the wire, lands under the claim's first
// name. Once the event is DONE and erased, the bucket holds nothing of
// it: no personal data stays readable behind an erasure.
func TestAnErasureTakesEveryObjectOfItsEvent(t *testing.T) {
	p, business, _ := recordingStack(t)
	ctx := context.Background()
	key, delivered, api, first := hugeCheckoutFetchedAgain(t, p, "hugeerase")
	bodyDone(t, p, business, key, api)
	// The receiver's late PutObject of the delivered bytes.
	if _, err := p.Stack.Emulators.S3().PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(p.Stack.Buckets["BodyBucket"]),
		Key: aws.String(first), Body: bytes.NewReader(delivered)}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Inbox.RemovePayload(ctx, key, inbox.RemovedErased, time.Now()); err != nil {
		t.Fatal(err)
	}
	if left := objects(t, p, key); len(left) != 0 {
		t.Errorf("after the erasure the bucket holds %v of %s; want nothing", left, key)
	}
}

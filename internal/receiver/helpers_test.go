package receiver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/internal/providers/standard"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

const (
	secret    = "whsec_test_current"
	oldSecret = "whsec_test_previous"
)

// now is the clock every test handler runs on.
var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// Secrets of the providers besides Stripe.
const (
	githubSecret   = "gh-secret-hookinbox"
	shopifySecret  = "shpss_hookinbox_test_0123456789abcdef"
	standardSecret = "whsec_c2VjcmV0LW9mLWhvb2tpbmJveC10ZXN0LWVuZHBvaW50"
	// standardSigningKey is a Standard Webhooks sender's ed25519 key
	// (v1a); the receiver holds only its public key.
	standardSigningKey = "whsk_cmVjZWl2ZXItdGVzdC1zdGFuZGFyZC1lZDI1NTE5ISE=" // 32 bytes
	adyenKey           = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"
	paddleSecret       = "pdl_ntfset_01hv8w0d1ry0q8z2c3m4x5y6z7_receiverTestReceiverTest00"
)

// allProviders builds every built-in provider as the receiver function
// does, with inline secrets, on clock.
func allProviders(t *testing.T, clock func() time.Time) map[string]receiver.Provider {
	t.Helper()
	secrets := map[string][]string{
		"stripe": {secret}, "github": {githubSecret}, "shopify": {shopifySecret},
		"standard": {standardSecret, standard.PublicKey(standardSigningKey)}, "adyen": {adyenKey}, "gopay": nil,
		"paddle": {paddleSecret}, "mollie": nil,
	}
	out := map[string]receiver.Provider{}
	for _, p := range builtinProviders() {
		v, err := p.Verifier(secrets[p.Name()], &provider.Env{Now: clock})
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		w := p.Webhook()
		out[p.Name()] = receiver.Provider{Verifier: v, Webhook: w}
	}
	return out
}

// stripeVerifiers returns the production Stripe verifier on the test clock,
// accepting two secrets as during a rotation.
func stripeVerifiers(clock func() time.Time) map[string]receiver.Provider {
	v, err := stripe.Provider{}.Verifier([]string{secret, oldSecret}, &provider.Env{Now: clock})
	if err != nil {
		panic(err)
	}
	return map[string]receiver.Provider{"stripe": {Verifier: v}}
}

// handlerOn returns a receiver with the default limits on the test clock,
// claiming through a real intake on store and q.
func handlerOn(clock func() time.Time, store intakeStore, q intakeQueue) *receiver.Handler {
	in := intake.New(intake.Config{Now: clock}, store, q, nil)
	return receiver.New(receiver.Config{}, stripeVerifiers(clock), in, nil)
}

// intakeStore and intakeQueue are what intake.New takes.
type (
	intakeStore interface {
		Claim(ctx context.Context, c inbox.Claim) (inbox.Item, error)
		PutPayload(ctx context.Context, it inbox.Item, raw []byte) error
		MarkEnqueued(ctx context.Context, key webhook.Key, cutoff, now time.Time, statuses ...inbox.Status) (inbox.Item, error)
		IndexSubjects(ctx context.Context, key webhook.Key, hashes []string, expiresAt time.Time) error
	}
	intakeQueue interface {
		Send(ctx context.Context, env queue.Envelope) error
	}
)

// request returns an API Gateway v2 request for POST /webhooks/stripe.
func request(body []byte, header string) events.APIGatewayV2HTTPRequest {
	req := lambdalocal.WebhookEvent("stripe", "POST", map[string]string{"content-type": "application/json"}, body)
	if header != "" {
		req.Headers["stripe-signature"] = header
	}
	return req
}

// signed returns a request carrying a Stripe event signed now with secret.
func signed(typ, id string) events.APIGatewayV2HTTPRequest {
	return signedSize(typ, id, 0)
}

// signedSize is signed with the payload padded to size bytes (0: the
// fixture as it is).
func signedSize(typ, id string, size int) events.APIGatewayV2HTTPRequest {
	var opts []verifytest.Option
	if size > 0 {
		opts = append(opts, verifytest.WithSize(size))
	}
	body := verifytest.StripeEvent(typ, id, now.Add(-time.Second), opts...)
	return request(body, stripe.SignatureHeader(body, now, secret))
}

// base64Request returns req with its body base64-encoded, as API Gateway
// passes binary bodies.
func base64Request(req events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPRequest {
	req.Body = base64.StdEncoding.EncodeToString([]byte(req.Body))
	req.IsBase64Encoded = true
	return req
}

// answer decodes a response body's "status" or "error".
func answer(t *testing.T, resp events.APIGatewayV2HTTPResponse) string {
	t.Helper()
	var body struct{ Status, Error string }
	if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
		t.Fatalf("response body %q is not JSON: %v", resp.Body, err)
	}
	return body.Status + body.Error
}

// fakeQueue records what was sent and can be told to fail.
type fakeQueue struct {
	mu   sync.Mutex
	sent []queue.Envelope
	fail bool
}

func (q *fakeQueue) Send(_ context.Context, env queue.Envelope) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail {
		return errors.New("sqs: ServiceUnavailable")
	}
	q.sent = append(q.sent, env)
	return nil
}

func (q *fakeQueue) Sent() []queue.Envelope {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]queue.Envelope(nil), q.sent...)
}

// hostileCase is a request that must be refused with status and change nothing.
type hostileCase struct {
	name   string
	req    events.APIGatewayV2HTTPRequest
	status int
}

// hostileRequests returns the refusals every receiver must give, with the
// status each must get. maxBody is the handler's body limit.
// padded returns the JSON body followed by spaces up to size bytes: still
// the same JSON, built in no time at any size.
func padded(body []byte, size int) []byte {
	return append(body, bytes.Repeat([]byte(" "), size-len(body))...)
}

func hostileRequests(maxBody int) []hostileCase {
	at := now.Add(-time.Second)
	body := verifytest.StripeEvent("checkout.session.completed", "evt_hostile", at)
	good := stripe.SignatureHeader(body, now, secret)
	withBody := func(b []byte, header string) events.APIGatewayV2HTTPRequest { return request(b, header) }
	signedBody := func(b []byte) events.APIGatewayV2HTTPRequest {
		return request(b, stripe.SignatureHeader(b, now, secret))
	}
	v1 := good[strings.Index(good, "v1="):]
	tampered := append([]byte(nil), body...)
	tampered[len(tampered)/2] ^= 0x01 // one bit of one byte
	huge := padded(verifytest.StripeEvent("checkout.session.completed", "evt_huge", at), maxBody+100)
	get := request(body, good)
	get.RequestContext.HTTP.Method = "GET"
	put := request(body, good)
	put.RequestContext.HTTP.Method = "PUT"
	unknown := request(body, good)
	unknown.PathParameters["provider"] = "paypal"
	lyingBase64 := request(body, good)
	lyingBase64.IsBase64Encoded = true
	notFlagged := base64Request(request(body, good))
	notFlagged.IsBase64Encoded = false
	return []hostileCase{
		{"no signature header", withBody(body, ""), 401},
		{"empty signature header", withBody(body, " "), 401},
		{"v0 signature only", withBody(body, strings.Replace(good, "v1=", "v0=", 1)), 401},
		{"no timestamp", withBody(body, v1), 401},
		{"garbage header", withBody(body, "garbage;;=="), 401},
		{"wrong secret", withBody(body, stripe.SignatureHeader(body, now, "whsec_attacker")), 401},
		{"tampered body", withBody(tampered, good), 401},
		{"signature of another body", withBody(verifytest.StripeEvent("checkout.session.completed", "evt_other", at), good), 401},
		{"stale timestamp", withBody(body, stripe.SignatureHeader(body, now.Add(-301*time.Second), secret)), 401},
		{"future timestamp", withBody(body, stripe.SignatureHeader(body, now.Add(301*time.Second), secret)), 401},
		{"base64 flag lying", lyingBase64, 400},
		{"base64 body not flagged", notFlagged, 401},
		{"huge body", signedBody(huge), 413},
		{"huge base64 body", base64Request(signedBody(huge)), 413},
		{"signed but not JSON", signedBody([]byte("not json at all")), 400},
		{"signed JSON array", signedBody([]byte(`[1,2,3]`)), 400},
		{"signed event without id", signedBody([]byte(`{"object":"event","type":"checkout.session.completed","created":1}`)), 400},
		{"signed event with empty id", signedBody([]byte(`{"id":"","object":"event","type":"x","created":1}`)), 400},
		{"absurd id: 300 bytes", signedBody([]byte(`{"id":"evt_` + strings.Repeat("a", 300) + `","object":"event","type":"x","created":1}`)), 400},
		{"absurd id: path traversal", signedBody([]byte(`{"id":"../../etc/passwd","object":"event","type":"x","created":1}`)), 400},
		{"absurd id: key separator", signedBody([]byte(`{"id":"evt_1#evt_2","object":"event","type":"x","created":1}`)), 400},
		{"unknown provider", unknown, 404},
		{"GET", get, 405},
		{"PUT", put, 405},
	}
}

// signHeaderAt signs body at t with the current secret.
func signHeaderAt(body string, t time.Time) string {
	return stripe.SignatureHeader([]byte(body), t, secret)
}

// attrString reads a DynamoDB string attribute.
func attrString(av types.AttributeValue, out *string) bool {
	s, ok := av.(*types.AttributeValueMemberS)
	if ok {
		*out = s.Value
	}
	return ok
}

// builtinProviders are hookinbox's providers, in the registry's order.
func builtinProviders() []provider.Provider {
	reg, err := builtin.Registry()
	if err != nil {
		panic(err)
	}
	return reg.All()
}

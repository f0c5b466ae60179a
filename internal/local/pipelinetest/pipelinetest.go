// Package pipelinetest wires receiver → SQS → processor on the local
// emulators (internal/local/devstack) with the SES and Stripe stand-ins
// (internal/local/standin), exactly as lambdafn wires the Lambda functions, for
// integration tests.
//
// Every Pipeline has a stack of its own (tables and queues under a unique
// name, deleted when the test ends), so tests that share the emulators do
// not see each other's events. Helpers take a testing.TB and fail the test
// on an error they cannot report otherwise. With -short, New skips the
// test, as devstacktest.ForTest does.
package pipelinetest

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/catalog"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
)

const (
	// SigningSecret is the receiver's STRIPE_WEBHOOK_SECRET; Deliver signs
	// with it.
	SigningSecret = "whsec_pipelinetest"
	// StripeKey is the STRIPE_API_KEY every function gets, and the key the
	// Stripe stand-in accepts.
	StripeKey = "sk_test_pipelinetest"
	// The other providers' secrets: the receiver accepts deliveries signed
	// with them, and the GoPay stand-in these client credentials.
	GitHubSecret      = "pipelinetest-github"
	ShopifySecret     = "pipelinetest-shopify"
	StandardSecret    = "whsec_cGlwZWxpbmV0ZXN0LXN0YW5kYXJkLXdlYmhvb2tz"
	AdyenHMACKey      = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056"
	GoPayClientID     = "pipelinetest-gopay-client"
	GoPayClientSecret = "pipelinetest-gopay-secret"
)

// ProviderEnv is the receiver's and the processor's environment for every
// provider besides Stripe, against the GoPay API at gopayURL.
func ProviderEnv(gopayURL string) map[string]string {
	return map[string]string{
		"GITHUB_WEBHOOK_SECRET":   GitHubSecret,
		"SHOPIFY_WEBHOOK_SECRET":  ShopifySecret,
		"STANDARD_WEBHOOK_SECRET": StandardSecret,
		"ADYEN_HMAC_KEY":          AdyenHMACKey,
		"GOPAY_CLIENT_ID":         GoPayClientID,
		"GOPAY_CLIENT_SECRET":     GoPayClientSecret,
		"GOPAY_API_URL":           gopayURL,
	}
}

// Pipeline is receiver → events queue → processor (→ DLQ) on dynalite and
// local-aws-sqs, with the stand-in SES and a stateful Stripe API, every
// function built by lambdafn from the env template.yaml gives it.
type Pipeline struct {
	Stack     *devstack.Stack
	SQS       *sqs.Client
	DynamoDB  *dynamodb.Client
	SES       *standin.SES
	SESURL    string // the SES stand-in's endpoint (AWS_ENDPOINT_URL_SESV2)
	Stripe    *standin.Stripe
	StripeURL string // the Stripe stand-in's base URL (STRIPE_API_URL)
	GoPay     *standin.GoPay
	GoPayURL  string // the GoPay stand-in's base URL (GOPAY_API_URL)
	Inbox     *inbox.DynamoDB
	Shop      *shop.Shop
	Events    *queue.Queue // EventsQueue
	DLQ       *queue.Queue // EventsDLQ
	// Receive is the ReceiverFunction as built for Lambda.
	Receive func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)
	// Process is the ProcessorFunction as built for Lambda.
	Process func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
	// Source feeds the events queue to Process as Lambda's event source
	// mapping would.
	Source *lambdalocal.SQSSource
	// Logs holds the JSON log of every function Build made.
	Logs *SyncBuffer
	// Meter counts the AWS requests and DynamoDB capacity of every
	// function Build made and of Source (Lambda's event source mapping,
	// whose SQS requests are billed too), not those of the test's own
	// clients.
	Meter *Meter

	cfg         aws.Config
	emu         *devstack.Emulators
	endpoints   devstack.ServiceEndpoints
	metricsFile string           // every function's METRICS_FILE: see Metrics
	processor   lambdafn.Builder // Options.Processor
}

// New starts (or finds) the emulators, creates a fresh stack from
// template.yaml, serves the SES and Stripe stand-ins, and builds the
// receiver and the processor. Everything is torn down when the test ends.
func New(t testing.TB) *Pipeline { return NewWith(t, Options{}) }

// Options change what New builds.
type Options struct {
	// Processor, when set, builds the processor instead of the template's
	// (the example shop): another module's business, wired by
	// processorfn.Builder.
	Processor lambdafn.Builder
	// ProcessorEnv is added to the processor's environment.
	ProcessorEnv map[string]string
}

// NewWith is New with opts.
func NewWith(t testing.TB, opts Options) *Pipeline {
	t.Helper()
	emu := devstacktest.ForTest(t)
	st := devstacktest.NewTestStack(t)
	p := &Pipeline{
		Stack: st, SQS: emu.SQS(), DynamoDB: emu.DynamoDB(),
		SES: standin.NewSES(), Stripe: standin.NewStripe(), Logs: &SyncBuffer{}, Meter: &Meter{},
		metricsFile: filepath.Join(t.TempDir(), "metrics.jsonl"),
	}
	p.Stripe.Key = StripeKey
	p.GoPay = standin.NewGoPay(GoPayClientID, GoPayClientSecret)
	p.SESURL = serve(t, p.SES)
	p.StripeURL = serve(t, p.Stripe)
	p.GoPayURL = serve(t, p.GoPay) + "/api"
	p.emu, p.endpoints = emu, devstack.ServiceEndpoints{"SESv2": p.SESURL}
	p.cfg = p.metered(emu.AWSConfigFor(p.endpoints))

	p.Receive = p.Build(t, "ReceiverFunction", map[string]string{"STRIPE_WEBHOOK_SECRET": SigningSecret}).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))
	p.processor = opts.Processor
	p.Process = p.Build(t, "ProcessorFunction", opts.ProcessorEnv).(func(context.Context, events.SQSEvent) (events.SQSEventResponse, error))
	p.Inbox = inbox.NewDynamoDB(p.DynamoDB, st.Tables["InboxTable"])
	p.Shop = shop.New(shop.Config{Table: st.Tables["ShopTable"], MailFrom: "shop@example.com"}, p.DynamoDB, nil, nil)
	p.Events = queue.New(p.SQS, st.Queues["EventsQueue"].URL)
	p.DLQ = queue.New(p.SQS, st.Queues["EventsDLQ"].URL)
	p.Source = &lambdalocal.SQSSource{
		Client: sqs.NewFromConfig(p.cfg), QueueURL: p.Events.URL(), QueueARN: st.Queues["EventsQueue"].ARN,
		BatchSize: 10, Function: lambdalocal.InProcess(p.Process),
	}
	return p
}

// Send hands req to the receiver, as API Gateway would, and returns its
// answer whatever the status.
func (p *Pipeline) Send(t testing.TB, req events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	t.Helper()
	resp, err := p.Receive(context.Background(), req)
	if err != nil {
		t.Fatalf("receiver: %v", err)
	}
	return resp
}

// serve starts a stand-in for the rest of the test and returns its URL.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	srv, err := standin.Serve(h, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv.URL
}

// SetEndpoint points the AWS SDK clients of functions built from now on at
// url for service, an SDK service ID such as "Secrets Manager" (moto).
func (p *Pipeline) SetEndpoint(service, url string) {
	p.endpoints[service] = url
	p.cfg = p.metered(p.emu.AWSConfigFor(p.endpoints))
}

// metered returns cfg with p.Meter installed.
func (p *Pipeline) metered(cfg aws.Config) aws.Config {
	p.Meter.Install(&cfg.APIOptions, p.Stack.Tables["ShopTable"])
	return cfg
}

// Build builds the template function logicalID through catalog.Builders,
// as its Lambda main would: with the env the stack gives it, the Stripe
// stand-in's key and URL, then overrides. It returns the handler.
func (p *Pipeline) Build(t testing.TB, logicalID string, overrides map[string]string) any {
	t.Helper()
	build, ok := catalog.Builders[logicalID]
	if logicalID == "ProcessorFunction" && p.processor != nil {
		build = p.processor
	}
	if !ok {
		t.Fatalf("catalog.Builders has no builder for %s", logicalID)
	}
	env, err := p.Stack.FunctionEnv(logicalID)
	if err != nil {
		t.Fatal(err)
	}
	env["STRIPE_API_KEY"], env["STRIPE_API_URL"] = StripeKey, p.StripeURL
	for k, v := range ProviderEnv(p.GoPayURL) {
		if _, declared := env[k]; declared {
			env[k] = v
		}
	}
	env["METRICS_FILE"] = p.metricsFile
	for k, v := range overrides {
		env[k] = v
	}
	// Every level, through the scrubber the Lambda mains use.
	log := logs.New(p.Logs, slog.LevelDebug)
	h, err := build(context.Background(), p.cfg, func(k string) string { return env[k] }, log)
	if err != nil {
		t.Fatalf("build %s: %v", logicalID, err)
	}
	return h
}

// Deliver POSTs a Stripe event to the receiver, signed now with
// SigningSecret, and returns the status it answered ("accepted",
// "duplicate"). Any answer but 200 fails the test. The Stripe stand-in
// first applies the event to its objects (standin.Stripe.Apply), as
// Stripe's own state is when it sends an event.
func (p *Pipeline) Deliver(t testing.TB, body []byte) string {
	t.Helper()
	p.Stripe.Apply(body)
	req := events.APIGatewayV2HTTPRequest{
		Headers:        map[string]string{"stripe-signature": verifytest.SignStripe(body, time.Now(), SigningSecret)},
		PathParameters: map[string]string{"provider": "stripe"},
		Body:           string(body),
	}
	req.RequestContext.HTTP.Method = "POST"
	resp, err := p.Receive(context.Background(), req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("receiver answered %d %s, %v", resp.StatusCode, resp.Body, err)
	}
	var out struct{ Status string }
	_ = json.Unmarshal([]byte(resp.Body), &out)
	return out.Status
}

// Metrics returns every embedded-metric-format line the functions Build
// made have written so far (their METRICS_FILE).
func (p *Pipeline) Metrics(t testing.TB) []metrics.Line {
	t.Helper()
	f, err := os.Open(p.metricsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := metrics.ReadLines(f)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// ProcessUntil feeds the events queue to the processor through Source until
// done reports true, failing the test if it does not within the given time.
func (p *Pipeline) ProcessUntil(t testing.TB, within time.Duration, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("the processor did not get there within %v", within)
		}
		if _, err := p.Source.PollOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

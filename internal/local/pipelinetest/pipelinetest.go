// Package pipelinetest runs receiver → SQS → processor for integration
// tests: a pipeline.Stack (the template's tables and queues on the local
// emulators, the stand-ins, the functions built as in Lambda) with helpers
// that take a testing.TB.
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
	"maps"
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
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/devstack/devstacktest"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/local/iamcheck"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/receiverfn"
	"github.com/hookinbox/hookinbox/reconcilerfn"
)

// The local secrets every Pipeline's functions get (pipeline.LocalEnv).
const (
	// SigningSecret is the receiver's STRIPE_WEBHOOK_SECRET; Deliver signs
	// with it.
	SigningSecret = pipeline.StripeSecret
	// StripeKey is the STRIPE_API_KEY of the functions that declare it,
	// and the key the Stripe stand-in accepts.
	StripeKey      = pipeline.StripeKey
	GitHubSecret   = pipeline.GitHubSecret
	ShopifySecret  = pipeline.ShopifySecret
	StandardSecret = pipeline.StandardSecret
	AdyenHMACKey   = pipeline.AdyenHMACKey
)

// Pipeline is receiver → events queue → processor (→ DLQ) on dynalite and
// local-aws-sqs, with the stand-in SES and a stateful Stripe API: a
// pipeline.Stack with its functions built for a test.
type Pipeline struct {
	*pipeline.Stack // its SES, Stripe and GoPay stand-ins, tables and queues
	SQS             *sqs.Client
	DynamoDB        *dynamodb.Client
	StripeURL       string // the Stripe stand-in's base URL (STRIPE_API_URL)
	Inbox           *inbox.DynamoDB
	Shop            *shop.Shop
	Events          *queue.Queue // EventsQueue
	DLQ             *queue.Queue // EventsDLQ
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

	env          map[string]string // SetEndpoint's, for every Build
	processorEnv map[string]string // Options.ProcessorEnv
	metricsFile  string            // every function's METRICS_FILE: see Metrics
}

// New starts (or finds) the emulators, starts a pipeline.Stack of
// template.yaml (its tables and queues under a fresh name, the stand-ins),
// and builds the receiver and the processor. Everything is torn down when
// the test ends.
func New(t testing.TB) *Pipeline { return NewWith(t, Options{}) }

// Options change what New builds.
type Options struct {
	// Processor, when set, builds the processor instead of the template's
	// (the example shop): another module's business, wired by
	// processorfn.Builder.
	Processor lambdafn.Builder
	// ProcessorEnv is added to the processor's environment.
	ProcessorEnv map[string]string
	// Template, when set, is the template whose tables, queues and
	// function environments the stack has, instead of the repository's
	// template.yaml: another module's stack.
	Template *samtemplate.Template
	// Params are the template's parameter values, over its defaults.
	Params map[string]string
	// Providers, when set, are a team's own providers, which the
	// receiver and the reconciler speak beside hookinbox's.
	Providers []provider.Provider
	// Secrets are local values of more secret variables
	// (pipeline.Options.Secrets).
	Secrets map[string]string
	// Forward, when set, is the URL of one more destination of the
	// processor that gets every event (pipeline.Options.Forward).
	Forward string
}

// NewWith is New with opts.
func NewWith(t testing.TB, opts Options) *Pipeline {
	t.Helper()
	emu := devstacktest.ForTest(t)
	p := &Pipeline{
		SQS: emu.SQS(), DynamoDB: emu.DynamoDB(), Logs: &SyncBuffer{}, Meter: &Meter{},
		env: map[string]string{}, metricsFile: filepath.Join(t.TempDir(), "metrics.jsonl"),
	}
	var shopTable string
	po := pipeline.Options{
		Env:    map[string]string{"METRICS_FILE": p.metricsFile},
		Config: func(cfg *aws.Config) { p.Meter.Install(cfg, shopTable) },
		// Every level, through the scrubber the Lambda mains use.
		Log:      func(string) *slog.Logger { return logs.New(p.Logs, slog.LevelDebug) },
		Template: opts.Template,
		Params:   opts.Params,
		Secrets:  opts.Secrets,
		Forward:  opts.Forward,
	}
	if opts.Template == nil {
		// Recorded for the IAM check (make test-iam), which knows
		// template.yaml's roles.
		po.IAMRecord, po.IAMTest = os.Getenv(iamcheck.RecordVariable), t.Name()
	}
	po.Builders = builders(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := pipeline.Start(ctx, emu, po)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	shopTable = st.Tables["ShopTable"]
	p.Stack = st
	p.StripeURL = st.Endpoints["STRIPE_API_URL"]

	p.Receive = p.Build(t, "ReceiverFunction", nil).(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error))
	p.processorEnv = opts.ProcessorEnv
	p.Process = p.Build(t, "ProcessorFunction", opts.ProcessorEnv).(func(context.Context, events.SQSEvent) (events.SQSEventResponse, error))
	p.Inbox = st.Inbox()
	p.Shop = shop.New(shop.Config{Table: shopTable, MailFrom: "shop@example.com"}, p.DynamoDB, nil, nil)
	p.Events = queue.New(emu.SQS(), st.Queues["EventsQueue"].URL)
	p.DLQ = queue.New(emu.SQS(), st.Queues["EventsDLQ"].URL)
	// Lambda's event source mapping polls with the processor's role.
	sourceCfg, err := st.Config("ProcessorFunction")
	if err != nil {
		t.Fatal(err)
	}
	p.Source = &lambdalocal.SQSSource{
		Client: sqs.NewFromConfig(sourceCfg), QueueURL: p.Events.URL(), QueueARN: st.Queues["EventsQueue"].ARN,
		BatchSize: 10, Function: lambdalocal.InProcess(p.Process),
	}
	return p
}

// builders returns the builders opts replace: the processor of another
// module's business, the receiver and reconciler with a team's providers.
func builders(opts Options) map[string]lambdafn.Builder {
	b := map[string]lambdafn.Builder{}
	if opts.Processor != nil {
		b["ProcessorFunction"] = opts.Processor
	}
	if len(opts.Providers) > 0 {
		b["ReceiverFunction"] = receiverfn.Builder(opts.Providers...)
		b["ReconcilerFunction"] = reconcilerfn.Builder(opts.Providers...)
	}
	return b
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

// SetEndpoint points the AWS SDK clients of functions built from now on at
// url for service, an SDK service ID such as "Secrets Manager" (moto), as
// AWS_ENDPOINT_URL_<SERVICE> does.
func (p *Pipeline) SetEndpoint(service, url string) {
	p.env[devstack.EndpointVariable(service)] = url
}

// Build builds the template function logicalID in process, as its Lambda
// main would (pipeline.Stack.Build), with the environment the stack gives
// it, then overrides. It returns the handler.
func (p *Pipeline) Build(t testing.TB, logicalID string, overrides map[string]string) any {
	t.Helper()
	env := maps.Clone(p.env)
	maps.Copy(env, overrides)
	h, err := p.Stack.Build(context.Background(), logicalID, env)
	if err != nil {
		t.Fatalf("build %s: %v", logicalID, err)
	}
	return h
}

// Deliver hands a Stripe event to the receiver, signed now with
// SigningSecret (pipeline.Stack.StripeRequest: the Stripe stand-in first
// takes its objects as its own), and returns the status it answered
// ("accepted", "duplicate"). Any answer but 200 fails the test.
func (p *Pipeline) Deliver(t testing.TB, body []byte) string {
	t.Helper()
	resp, err := p.Receive(context.Background(), p.Stack.StripeRequest(body))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("receiver answered %d %s, %v", resp.StatusCode, resp.Body, err)
	}
	var out struct{ Status string }
	_ = json.Unmarshal([]byte(resp.Body), &out)
	return out.Status
}

// MetricsFile is every function's METRICS_FILE: the metric lines a
// local stack's `hookinbox status` sums.
func (p *Pipeline) MetricsFile() string { return p.metricsFile }

// Metrics returns every embedded-metric-format line the functions Build
// made have written so far (their METRICS_FILE).
func (p *Pipeline) Metrics(t testing.TB) []emf.Line {
	t.Helper()
	f, err := os.Open(p.metricsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := emf.ReadLines(f)
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

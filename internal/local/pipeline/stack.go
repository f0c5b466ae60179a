// Package pipeline runs hookinbox's functions on this machine as Lambda
// runs them. A Stack is the template's tables and queues on the local
// emulators (devstack), the SES, Stripe, GoPay, GitHub and Shopify API stand-ins
// (standin), and each function of the template built from the environment
// the template gives it, filled in with the stack's endpoints and the
// local secrets: in process, through catalog.Builders and
// devstack.ConfigFromEnv as the Lambda mains build it, or as its real
// bootstrap under aws-lambda-rie with the same environment.
//
// `hookinbox dev`, `hookinbox chaos` and the pipeline tests
// (pipelinetest, hookinboxtest) start their pipeline here; each wires the
// functions to their events as it needs. Every Stack has tables and
// queues of its own, deleted by Close. A Stack is safe for concurrent use.
package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/gopay"
	"github.com/hookinbox/hookinbox/internal/providers/mollie"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider/sample"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/local/catalog"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/iamcheck"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
)

// Options say what Start builds.
type Options struct {
	// Name is the stack name that prefixes table and queue names; default
	// devstack.UniqueStackName().
	Name string
	// Template defaults to the repository's template.yaml.
	Template *samtemplate.Template
	// Env is set in every function's environment, over what Env gives
	// (METRICS_FILE, another STRIPE_WEBHOOK_SECRET, ...).
	Env map[string]string
	// Builders replace entries of catalog.Builders: another module's
	// processor, for example.
	Builders map[string]lambdafn.Builder
	// Config, when set, changes the AWS configuration of every function
	// Build builds (a request meter, for example).
	Config func(*aws.Config)
	// Log returns the logger of the function logicalID; default none.
	Log func(logicalID string) *slog.Logger
	// Params are the template's parameter values, over its defaults: a
	// parameter without a default needs one.
	Params map[string]string
	// Secrets are local values of more secret variables (a team's own
	// provider's), set like LocalEnv's in the functions that declare them.
	Secrets map[string]string
	// IAMRecord, when set, is the directory where every request of the
	// stack's functions is recorded for iamcheck.Check: each function
	// signs with its own access key ID (iamcheck.AccessKeyID) and reaches
	// every AWS endpoint through a recording proxy. IAMTest names the
	// test in the record.
	IAMRecord, IAMTest string
	// Forward, when set, is the URL of one more destination of the
	// processor, ForwardName, that gets every event (hookinbox dev
	// --forward).
	Forward string
	// DestinationSecret is the local value of every destination's signing
	// secret; default DestinationSecret.
	DestinationSecret string
}

// Stack is one running local pipeline: the template's tables and queues
// (the embedded devstack.Stack), the stand-ins, and the functions Build
// and StartBootstrap make.
type Stack struct {
	*devstack.Stack
	Emulators *devstack.Emulators
	SES       *standin.SES
	Stripe    *standin.Stripe  // accepts StripeKey
	GoPay     *standin.GoPay   // accepts GoPayClientID and GoPayClientSecret
	GitHub    *standin.GitHub  // accepts gitHubToken
	Shopify   *standin.Shopify // accepts shopifyAdminToken
	Mollie    *standin.Mollie  // accepts mollieKey
	// Endpoints point a function at the stack: AWS_ENDPOINT_URL_DYNAMODB,
	// AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_S3 (when the emulators serve
	// S3), AWS_ENDPOINT_URL_SESV2 (the SES stand-in),
	// STRIPE_API_URL, GOPAY_API_URL, GITHUB_API_URL, SHOPIFY_API_URL and
	// MOLLIE_API_URL (the stand-ins).
	Endpoints map[string]string

	opts     Options
	servers  []*standin.Server
	recorder *iamcheck.Recorder // nil unless Options.IAMRecord
}

// Start creates the stack's tables and queues on emu and serves the
// stand-ins on free ports of 127.0.0.1. Close undoes both.
func Start(ctx context.Context, emu *devstack.Emulators, opts Options) (*Stack, error) {
	if opts.Name == "" {
		opts.Name = devstack.UniqueStackName()
	}
	if opts.Template == nil {
		tpl, err := devstack.RootTemplate()
		if err != nil {
			return nil, err
		}
		opts.Template = tpl
	}
	if opts.Log == nil {
		opts.Log = func(string) *slog.Logger { return slog.New(slog.DiscardHandler) }
	}
	st, err := emu.CreateStackWith(ctx, opts.Template, opts.Name, opts.Params)
	if err != nil {
		return nil, err
	}
	s := &Stack{
		Stack: st, Emulators: emu, opts: opts,
		SES: standin.NewSES(), Stripe: standin.NewStripe(), GoPay: standin.NewGoPay(GoPayClientID, GoPayClientSecret),
		GitHub: standin.NewGitHub(gitHubToken), Shopify: standin.NewShopify(shopifyAdminToken),
		Mollie: standin.NewMollie(mollieKey),
	}
	s.Stripe.Key = StripeKey
	var urls []string
	for _, h := range []http.Handler{s.SES, s.Stripe, s.GoPay, s.GitHub, s.Shopify, s.Mollie} {
		srv, err := standin.Serve(h, "")
		if err != nil {
			return nil, errors.Join(fmt.Errorf("stack %s: start a stand-in: %w", opts.Name, err), s.Close())
		}
		s.servers = append(s.servers, srv)
		urls = append(urls, srv.URL)
	}
	s.Endpoints = map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB": emu.DynamoDBURL,
		"AWS_ENDPOINT_URL_SQS":      emu.SQSURL,
		"AWS_ENDPOINT_URL_SESV2":    urls[0],
		"STRIPE_API_URL":            urls[1],
		"GOPAY_API_URL":             urls[2] + "/api",
		"GITHUB_API_URL":            urls[3],
		"SHOPIFY_API_URL":           urls[4] + "/admin/api/graphql.json", // the stand-in serves any version
		"MOLLIE_API_URL":            urls[5],
	}
	if emu.S3URL != "" {
		s.Endpoints["AWS_ENDPOINT_URL_S3"] = emu.S3URL
	}
	if opts.IAMRecord != "" {
		if s.recorder, err = newRecorder(opts.IAMRecord, opts.IAMTest, st); err != nil {
			return nil, errors.Join(fmt.Errorf("stack %s: %w", opts.Name, err), s.Close())
		}
	}
	return s, nil
}

// Inbox returns the store on the stack's inbox table, with its body
// bucket: what the functions read and write.
func (s *Stack) Inbox() *inbox.DynamoDB {
	store := inbox.NewDynamoDB(s.Emulators.DynamoDB(), s.Tables["InboxTable"])
	if bucket := s.Buckets["BodyBucket"]; bucket != "" {
		store = store.WithBodies(inbox.NewBodies(s.Emulators.S3(), bucket))
	}
	return store
}

// Close stops the stand-ins and deletes the tables and queues.
func (s *Stack) Close() error {
	for _, srv := range s.servers {
		srv.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := s.Delete(ctx)
	if s.recorder != nil {
		err = errors.Join(err, s.recorder.Close())
	}
	return err
}

// Env returns the environment of the function logicalID: the variables
// the template gives it, resolved to this stack, with the local secrets
// (LocalEnv) in those it declares; the emulators' region, credentials and
// endpoints, and the stand-ins' (Endpoints); then Options.Env and
// overrides. Its DESTINATIONS gain Options.Forward's, and the secrets
// they name their local values (see destinations). Empty AWS_ENDPOINT_URL* variables are left out. When the
// stack records (Options.IAMRecord), the function signs with its own
// access key ID and every AWS endpoint is its recording proxy.
func (s *Stack) Env(logicalID string, overrides map[string]string) (map[string]string, error) {
	env, err := s.FunctionEnv(logicalID)
	if err != nil {
		return nil, err
	}
	local := LocalEnv(s.Endpoints["GOPAY_API_URL"])
	maps.Copy(local, s.opts.Secrets)
	if types, declared := env["STRIPE_EVENT_TYPES"]; declared && types == "" {
		// No Stripe event types (a template of a business file without
		// them, such as one with only Destinations): the reconciler's
		// Stripe source stays off, as deployed without a Stripe key.
		delete(local, "STRIPE_API_KEY")
	}
	for k, v := range local {
		if _, declared := env[k]; declared {
			env[k] = v
		}
	}
	maps.Copy(env, s.Emulators.EnvMap())
	maps.Copy(env, s.Endpoints)
	maps.Copy(env, s.opts.Env)
	maps.Copy(env, overrides)
	if _, declared := env[destinationsEnv]; declared || (logicalID == "ProcessorFunction" && s.opts.Forward != "") {
		if err := s.setDestinations(env); err != nil {
			return nil, fmt.Errorf("function %s: %w", logicalID, err)
		}
	}
	for k, v := range env {
		if v == "" && strings.HasPrefix(k, "AWS_ENDPOINT_URL") {
			// Declared empty for `sam local --env-vars`: unset, as the
			// SDK reads it.
			delete(env, k)
		}
	}
	if s.recorder != nil {
		env["AWS_ACCESS_KEY_ID"] = iamcheck.AccessKeyID(logicalID)
		for k, v := range env {
			if strings.HasPrefix(k, "AWS_ENDPOINT_URL") {
				if env[k], err = s.recorder.Front(v); err != nil {
					return nil, err
				}
			}
		}
	}
	return env, nil
}

// Build builds the function logicalID in process, as its Lambda main
// does (Options.Builders, else catalog.Builders), with Env's environment:
// its AWS configuration comes from that environment through
// devstack.ConfigFromEnv, with the emulators' quick retries. It returns the
// handler.
func (s *Stack) Build(ctx context.Context, logicalID string, overrides map[string]string) (any, error) {
	build, ok := s.opts.Builders[logicalID]
	if !ok {
		build, ok = catalog.Builders[logicalID]
	}
	if !ok {
		return nil, fmt.Errorf("function %s has no builder in internal/local/catalog.Builders", logicalID)
	}
	env, err := s.Env(logicalID, overrides)
	if err != nil {
		return nil, err
	}
	getenv := func(k string) string { return env[k] }
	cfg, err := s.config(logicalID, getenv)
	if err != nil {
		return nil, err
	}
	h, err := build(ctx, cfg, getenv, s.opts.Log(logicalID))
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", logicalID, err)
	}
	return h, nil
}

// Config returns the AWS configuration the function logicalID is built
// with: Lambda's event source mapping, which polls with the function's
// role, uses it too.
func (s *Stack) Config(logicalID string) (aws.Config, error) {
	env, err := s.Env(logicalID, nil)
	if err != nil {
		return aws.Config{}, err
	}
	return s.config(logicalID, func(k string) string { return env[k] })
}

// config is the AWS configuration of getenv's environment with the
// emulators' quick retries and Options.Config.
func (s *Stack) config(logicalID string, getenv func(string) string) (aws.Config, error) {
	cfg, err := devstack.ConfigFromEnv(getenv)
	if err != nil {
		return aws.Config{}, fmt.Errorf("function %s: %w", logicalID, err)
	}
	cfg.Retryer = s.Emulators.AWSConfig().Retryer
	if s.opts.Config != nil {
		s.opts.Config(&cfg)
	}
	return cfg, nil
}

// StartBootstrap runs bootstrap, the function logicalID built for this
// host (devstack.BuildFunction), under aws-lambda-rie with Env's
// environment and the template's Timeout and MemorySize. Its output goes
// to out. The caller stops it.
func (s *Stack) StartBootstrap(ctx context.Context, logicalID, bootstrap string, overrides map[string]string, out io.Writer) (*devstack.Function, error) {
	spec, err := s.Function(logicalID)
	if err != nil {
		return nil, err
	}
	env, err := s.Env(logicalID, overrides)
	if err != nil {
		return nil, err
	}
	env["AWS_LAMBDA_FUNCTION_NAME"] = logicalID
	env["AWS_LAMBDA_FUNCTION_TIMEOUT"] = strconv.Itoa(spec.Timeout)
	env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = strconv.Itoa(spec.Memory)
	maps.Copy(env, overrides)
	fn, err := devstack.StartFunction(ctx, bootstrap, env, devstack.Options{Stdout: out, Stderr: out})
	if err != nil {
		return nil, fmt.Errorf("function %s: %w", logicalID, err)
	}
	return fn, nil
}

// StripeRequest returns the API Gateway request that delivers the Stripe
// event body to the receiver, signed now with StripeSecret. The Stripe
// stand-in first takes the event's objects as its own, as Stripe's state
// is when it sends the event.
func (s *Stack) StripeRequest(body []byte) events.APIGatewayV2HTTPRequest {
	s.Stripe.Apply(body)
	req := events.APIGatewayV2HTTPRequest{
		RouteKey:       "POST /webhooks/{provider}",
		RawPath:        "/webhooks/stripe",
		Headers:        map[string]string{"content-type": "application/json", "stripe-signature": stripe.SignatureHeader(body, time.Now(), s.secret())},
		PathParameters: map[string]string{"provider": "stripe"},
		Body:           string(body),
	}
	req.RequestContext.HTTP.Method = "POST"
	return req
}

// secret is the receiver's STRIPE_WEBHOOK_SECRET.
func (s *Stack) secret() string {
	if v := s.opts.Env["STRIPE_WEBHOOK_SECRET"]; v != "" {
		return v
	}
	return StripeSecret
}

// Stage puts on the stand-ins what a provider holds before it sends body:
// a Stripe event's objects, a GoPay or Mollie payment (its notification
// is the id alone). Other providers' deliveries need nothing.
func (s *Stack) Stage(provider string, body []byte) error {
	switch provider {
	case stripe.Name:
		s.Stripe.Apply(body)
	case gopay.Name:
		var pay standin.GoPayPayment
		if err := json.Unmarshal(body, &pay); err != nil {
			return fmt.Errorf("body is not a GoPay payment: %w", err)
		}
		s.GoPay.SetPayment(pay)
	case mollie.Name:
		var pay standin.MolliePayment
		if err := json.Unmarshal(body, &pay); err != nil || pay.ID == "" || pay.Status == "" {
			return fmt.Errorf("body is not a Mollie payment with an id and a status")
		}
		s.Mollie.SetPayment(pay)
	}
	return nil
}

// Signed returns the API Gateway request of the delivery of ev by
// sender's provider p, signed at at with the secrets the receiver holds
// (its variable p.Webhook().SecretEnv), after Stage and after the
// stand-ins take ev.API.
func (s *Stack) Signed(sender sample.Sender, ev sample.Event, at time.Time) (events.APIGatewayV2HTTPRequest, error) {
	p := sender.Provider
	if err := s.stage(p, ev); err != nil {
		return events.APIGatewayV2HTTPRequest{}, err
	}
	if err := s.Stage(p.Name(), ev.Body); err != nil {
		return events.APIGatewayV2HTTPRequest{}, err
	}
	env, err := s.Env("ReceiverFunction", nil)
	if err != nil {
		return events.APIGatewayV2HTTPRequest{}, err
	}
	req, err := sender.Sign(ev, envconfig.Split(env[p.Webhook().SecretEnv]), at)
	if err != nil {
		return events.APIGatewayV2HTTPRequest{}, err
	}
	return lambdalocal.Delivery(p.Name(), req), nil
}

// Delivered plays the provider that sent body to the stack's webhook
// URL: its stand-in's objects are as the delivery says before anyone
// reads them (the Stripe stand-in's subscriptions, Stripe.Apply).
func (s *Stack) Delivered(provider string, body []byte) {
	if provider == "stripe" && s.Stripe != nil {
		s.Stripe.Apply(body)
	}
}

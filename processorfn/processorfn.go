// Package processorfn runs hookinbox's processor Lambda with your business
// code: hookinbox leases each event, runs your Business through the effect
// ledger, records the outcome, retries with backoff and parks permanent
// failures in the DLQ; your code only says what an event means.
//
// A processor main is one line:
//
//	func main() { processorfn.Run(mybusiness.FromEnv) }
//
// The processor reads its own settings (INBOX_TABLE, EVENTS_QUEUE_URL,
// EVENTS_DLQ_URL, the Stripe key for fetching a lost payload, the lease
// and budget timings) and your BusinessBuilder reads yours, from the same
// environment; a cold start reports every missing setting of both in one
// error. It is part of hookinbox's public API (see the CHANGELOG for
// changes within v0.x). Build is safe to call more than once, and the
// handler it returns is safe for concurrent use.
package processorfn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/gopayapi"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/stripeapi"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/internal/verify"
	"github.com/hookinbox/hookinbox/webhook"
)

// Business is your code: Handle runs the effects of one verified event
// through fx (effects.Runner) and returns nil (DONE), an error wrapping
// webhook.ErrNoHandler (IGNORED), webhook.Permanent(err) (parked in the DLQ
// at once, with the reason), or any other error (retried with backoff).
// Decide on the event's provider and type before decoding its payload
// (Mux does it for you), so a type you do not handle ends IGNORED however
// odd its body. A Business that also has a method
// Handles(provider, eventType string) bool (Mux has) names the types the
// processor's metrics break down by; every other type is counted as
// "other".
type Business interface {
	Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error
}

// BusinessBuilder builds your Business at cold start from the function's
// AWS config and environment. It reads its own settings through getenv and
// returns an error naming every missing one. Its ctx carries the
// processor's DynamoDB client (DynamoDB): use it for your tables, so the
// process keeps one client and one pool of connections.
type BusinessBuilder func(ctx context.Context, cfg aws.Config, getenv func(string) string) (Business, error)

// Run is the whole main of a processor Lambda whose business b builds:
// JSON logs, the default AWS config, the handler, lambda.Start. A function
// that cannot start logs every missing setting and exits 1.
func Run(b BusinessBuilder) { lambdafn.Main(Builder(b)) }

// Builder returns the processor's builder with the business b builds, for
// Run, `hookinbox dev` and tests, which all wire the processor this way.
func Builder(b BusinessBuilder) lambdafn.Builder {
	return func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
		return build(ctx, cfg, getenv, log, b)
	}
}

// dynamoDBKey is the context key of the processor's DynamoDB client.
type dynamoDBKey struct{}

// DynamoDB returns the processor's own DynamoDB client from the ctx a
// BusinessBuilder is given, or a new client from cfg outside one.
func DynamoDB(ctx context.Context, cfg aws.Config) *dynamodb.Client {
	if db, ok := ctx.Value(dynamoDBKey{}).(*dynamodb.Client); ok {
		return db
	}
	return dynamodb.NewFromConfig(cfg)
}

func build(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger, b BusinessBuilder) (any, error) {
	s, err := loadSettings(getenv)
	db := dynamodb.NewFromConfig(cfg)
	ctx = context.WithValue(ctx, dynamoDBKey{}, db)
	bctx := ctx
	var apiKey *secrets.Rotating
	if err == nil {
		if apiKey, err = stripeapi.Key(ctx, cfg, s.StripeAPIKey, s.StripeAPIKeyARN, s.SecretMaxAge, s.SecretReload); err != nil {
			return nil, err
		}
		// The business gets this key (stripeapi.KeyFromContext) rather than
		// loading the same secret again.
		bctx = stripeapi.ContextWithKey(ctx, apiKey)
	}
	business, berr := b(bctx, cfg, getenv)
	if err != nil || berr != nil {
		return nil, errors.Join(err, berr)
	}
	keys, err := apiKey.Values(ctx)
	if err != nil {
		return nil, fmt.Errorf("stripe key: %w", err)
	}
	live, err := liveModes(s, append(keys, "")[0])
	if err != nil {
		return nil, err
	}
	rec, err := lambdafn.Recorder(getenv)
	if err != nil {
		return nil, err
	}
	rec = rec.WithEventTypes(eventTypes(business))
	sq := sqs.NewFromConfig(cfg)
	fetchers := map[string]processor.Fetcher{
		verify.StripeProvider: stripeapi.FetchEvent(apiKey, s.StripeAPIURL, stripeapi.HTTPClient()),
	}
	// A Stripe thin event is only a pointer: the processor fetches the v2
	// event and its object on every attempt.
	fetchWhen := map[string]func([]byte) bool{verify.StripeProvider: stripeapi.IsThin}
	if s.GoPayEnabled() {
		secret, err := stripeapi.Key(ctx, cfg, s.GoPaySecret, s.GoPaySecretARN, s.SecretMaxAge, s.SecretReload)
		if err != nil {
			return nil, fmt.Errorf("gopay client secret: %w", err)
		}
		// Every fetch records a payment that is not final yet, so the
		// reconciler fetches it again until it is.
		watch := &reconcile.GoPayWatch{DB: db, Table: s.Table}
		fetchers[verify.GoPayProvider] = processor.GoPayFetcher(watch.Watching(gopayapi.Payments(s.GoPayClientID, secret, s.GoPayAPIURL, stripeapi.HTTPClient())))
		fetchWhen[verify.GoPayProvider] = processor.Always
	}
	business = stripeHealth{next: business, metrics: rec, log: log}
	h := processor.New(
		processor.Config{
			LeaseFor: s.LeaseFor, Budget: s.Budget, Reserve: s.Reserve, MaxReceiveCount: s.MaxReceiveCount,
			BackoffMax: s.BackoffMax, MaxInfraFailures: s.MaxInfraFails,
			NotFoundTries: s.NotFoundTries, NotFoundWindow: s.NotFoundWindow, NotFoundHold: s.NotFoundHold,
			Metrics:  rec,
			Fetchers: fetchers, FetchWhen: fetchWhen,
			IDOnly: map[string]bool{verify.GoPayProvider: true},
			Live:   live,
		},
		inbox.NewDynamoDB(db, s.Table).WithBodies(inbox.BodiesFor(cfg, s.Bucket, s.S3PathStyle)),
		effects.NewLedger(db, s.Table, inbox.DefaultTTL),
		business,
		queue.New(sq, s.QueueURL),
		queue.New(sq, s.DLQURL),
		log,
	)
	return h.Handle, nil
}

// handlesTypes is a Business that says which event types it handles.
type handlesTypes interface {
	Handles(provider, eventType string) bool
}

// eventTypes returns the event types the processor's metrics name as
// their EventType dimension, every other one being "other": those the
// business handles when it says which (a Mux does, through Handles), or
// else those no sender can choose (verify.TypeBounded). A made-up
// X-GitHub-Event or X-Shopify-Topic so never mints a metric.
func eventTypes(b Business) func(provider, eventType string) bool {
	if h, ok := b.(handlesTypes); ok {
		return h.Handles
	}
	return verify.TypeBounded
}

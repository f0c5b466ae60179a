// Package processorfn runs hookinbox's processor Lambda with your
// business code. For each event on the events queue it leases the claim
// (a worker that dies loses nothing: the lease ends and another takes
// it), runs your Business with a Runner of the effect ledger (each named
// effect runs once however often the event comes), records the outcome,
// retries a failure with backoff and parks a permanent one in the
// dead-letter queue with its reason. Your code only says what an event
// means. A processor main is one line:
//
//	func main() { processorfn.Run(mybusiness.FromEnv) }
//
// The processor reads its own settings (INBOX_TABLE, EVENTS_QUEUE_URL,
// EVENTS_DLQ_URL, the lease and budget timings), each provider its own,
// and your BusinessBuilder yours, from the same environment; a cold start
// names every missing setting of all three in one error. The destinations
// DESTINATIONS lists run beside the business, each its own effect. A
// handler Builder returns is safe for concurrent use.
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
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/internal/processor"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Business is your code: Handle runs the effects of one verified event
// through fx (effects.Runner) and returns nil (DONE), an error wrapping
// webhook.ErrNoHandler (IGNORED), webhook.Permanent(err) (parked in the DLQ
// at once, with the reason), an error wrapping webhook.ErrBusy (it tried
// nothing: back soon, the attempt not counted), or any other error
// (retried with backoff, no sooner than webhook.RetryAfter asks).
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
// JSON logs, the AWS config of the Lambda environment, the handler,
// lambda.Start. providers are your own, beside hookinbox's, as your
// receiver's and reconciler's mains get them. A function that cannot
// start logs every missing setting and exits 1.
func Run(b BusinessBuilder, providers ...provider.Provider) { lambdafn.Main(Builder(b, providers...)) }

// Builder returns what Run starts, for running the processor in-process
// (hookinbox dev, hookinboxtest): it builds the handler from cfg and the
// environment getenv reads. b may be nil, or build a nil Business, when
// DESTINATIONS lists destinations: the processor then only delivers.
func Builder(b BusinessBuilder, providers ...provider.Provider) func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
	return func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
		reg, err := builtin.Registry(providers...)
		if err != nil {
			return nil, err
		}
		return build(ctx, cfg, getenv, log, b, reg)
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

// build builds the processor of reg's providers, with the business b
// builds (nil: destinations only), the destinations, the alerts and the
// privacy requests around it.
func build(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger, b BusinessBuilder, reg *provider.Registry) (any, error) {
	s, err := loadSettings(getenv)
	db := dynamodb.NewFromConfig(cfg)
	ctx = context.WithValue(ctx, dynamoDBKey{}, db)
	env := &provider.Env{Getenv: getenv, AWS: cfg, DynamoDB: db, Table: s.Table}
	env.LoadSecret = secrets.Loader(env, s.SecretMaxAge, s.SecretReload)
	all, ferr := providerFetches(ctx, env, reg)
	var business Business
	var berr error
	if b != nil {
		// The business gets the environment the providers read
		// (provider.EnvFromContext), so it uses the secrets they loaded.
		business, berr = b(provider.ContextWithEnv(ctx, env), cfg, getenv)
	}
	if err := errors.Join(err, ferr, berr); err != nil {
		return nil, err
	}
	rec, err := lambdafn.Recorder(getenv)
	if err != nil {
		return nil, err
	}
	rec = rec.WithEventTypes(eventTypes(business, reg))
	business, dests, err := withDestinations(ctx, cfg, getenv, s, db, rec, log, business)
	if err != nil {
		return nil, err
	}
	sq := sqs.NewFromConfig(cfg)
	idOnly, fetch, alert := fetchesByProvider(reg, all)
	business = alerts{next: business, alert: alert, metrics: rec, log: log}
	store := inbox.NewDynamoDB(db, s.Table).WithBodies(inbox.BodiesFor(cfg, s.Bucket, s.S3PathStyle))
	eraser, subjects, err := erasure(ctx, env, reg, all, store, sq, queue.New(sq, s.QueueURL), rec, log)
	if err != nil {
		return nil, err
	}
	business = privacyRequests{next: business, requesters: requesters(reg), eraser: eraser, log: log}
	h := processor.New(
		delivering(processor.Config{
			LeaseFor: s.LeaseFor, Budget: s.Budget, Reserve: s.Reserve, MaxReceiveCount: s.MaxReceiveCount,
			BackoffMax: s.BackoffMax, MaxInfraFailures: s.MaxInfraFails,
			NotFoundTries: s.NotFoundTries, NotFoundWindow: s.NotFoundWindow, NotFoundHold: s.NotFoundHold,
			Metrics: rec, Fetch: fetch, IDOnly: idOnly, Live: liveModes(all), Subjects: subjects,
		}, dests),
		store,
		ledger.New(db, s.Table, inbox.DefaultTTL),
		business,
		queue.New(sq, s.QueueURL),
		queue.New(sq, s.DLQURL),
		log,
	)
	return h.Handle, nil
}

// fetchesByProvider returns, by provider name, whether it is id-only, its
// fetch (where it has one) and its alert (where it has one).
func fetchesByProvider(reg *provider.Registry, all map[string]provider.Fetch) (map[string]bool, map[string]provider.Fetch, map[string]func(webhook.Event) (provider.Alert, bool)) {
	idOnly, fetch, alert := map[string]bool{}, map[string]provider.Fetch{}, map[string]func(webhook.Event) (provider.Alert, bool){}
	for _, p := range reg.All() {
		idOnly[p.Name()] = p.Webhook().IDOnly
		if f := all[p.Name()]; f.Get != nil {
			fetch[p.Name()] = f
		}
		if f := all[p.Name()]; f.Alert != nil {
			alert[p.Name()] = f.Alert
		}
	}
	return idOnly, fetch, alert
}

// withDestinations returns business with the destinations DESTINATIONS
// lists beside it, and those (nil: none). No business and no destination
// is an error.
func withDestinations(ctx context.Context, cfg aws.Config, getenv func(string) string, s settings, db *dynamodb.Client, rec *metrics.Recorder, log *slog.Logger, business Business) (Business, *destination.Set, error) {
	dests, err := destinations(ctx, cfg, getenv, s, db, rec, log)
	switch {
	case err != nil:
		return nil, nil, err
	case dests.Len() > 0:
		return dests.Wrap(business), dests, nil
	case business == nil:
		return nil, nil, errors.New("no business and no destinations: set DESTINATIONS, or run the processor with your BusinessBuilder")
	}
	return business, nil, nil
}

// erasure returns the eraser of privacy requests and the processor's
// subject indexer, both nil when no subject key is set.
func erasure(ctx context.Context, env *provider.Env, reg *provider.Registry, all map[string]provider.Fetch, store *inbox.DynamoDB,
	sq *sqs.Client, events *queue.Queue, rec *metrics.Recorder, log *slog.Logger) (*privacy.Eraser, func(context.Context, webhook.Event) ([]string, error), error) {
	hasher, indexes, err := privacy.FromEnv(ctx, env)
	if err != nil || !indexes {
		return nil, nil, err
	}
	eraser, subjects := privacy.NewEraser(store, hasher, nil), privacy.Subjects(reg, hasher)
	// An erasure takes the events a provider's queue holds into the
	// inbox, as the provider's own intake would claim them.
	in := intake.New(intake.Config{FromProviderAPI: true, Metrics: rec, Subjects: subjects}, store, events, log)
	claim := func(ctx context.Context, ev webhook.Event) error {
		_, err := in.Accept(ctx, ev)
		return err
	}
	for _, p := range reg.All() {
		if p.Webhook().Subjects != nil && all[p.Name()].EventQueue != "" {
			eraser.WithQueue(privacy.EventQueue{Client: sq, URL: all[p.Name()].EventQueue, Provider: p.Name(), Finder: p,
				Parse: all[p.Name()].QueuedEvent, Claim: claim})
		}
	}
	return eraser, subjects, nil
}

// providerFetches returns what the processor needs of each provider
// (provider.Provider.Processor), by name; the error names every setting
// missing or wrong, of every provider.
func providerFetches(ctx context.Context, env *provider.Env, reg *provider.Registry) (map[string]provider.Fetch, error) {
	fetch := map[string]provider.Fetch{}
	var errs []error
	for _, p := range reg.All() {
		f, err := p.Processor(ctx, env)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Name(), err))
			continue
		}
		fetch[p.Name()] = f
	}
	return fetch, errors.Join(errs...)
}

// handlesTypes is a Business that says which event types it handles.
type handlesTypes interface {
	Handles(provider, eventType string) bool
}

// eventTypes returns the event types the processor's metrics name as
// their EventType dimension, every other one being "other": those the
// business handles when it says which (a Mux does, through Handles), or
// else those no sender can choose (reg.TypeBounded). A made-up
// X-GitHub-Event or X-Shopify-Topic so never mints a metric.
func eventTypes(b Business, reg *provider.Registry) func(provider, eventType string) bool {
	if h, ok := b.(handlesTypes); ok {
		return h.Handles
	}
	return reg.TypeBounded
}

package stripe

import (
	"context"
	"errors"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Provider is Stripe: snapshot and thin events signed in Stripe-Signature
// (Verifier), a lost payload or a thin event fetched from the API, and
// the event list as the reconciler's source.
type Provider struct{}

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Webhook implements provider.Provider.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{SecretEnv: "STRIPE_WEBHOOK_SECRET", Subjects: subjects}
}

// Verifier implements provider.Provider: the signing secrets ("whsec_"),
// and STRIPE_TOLERANCE (default 300s) as the timestamp's tolerance.
func (Provider) Verifier(secrets []string, env *provider.Env) (provider.Verifier, error) {
	r := env.Settings()
	v := &verifier{Secrets: secrets, Tolerance: r.Duration("STRIPE_TOLERANCE", defaultTolerance), Now: env.Now}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return v, v.Validate()
}

// maxLookback is the longest STRIPE_EVENTS_LOOKBACK: Stripe lists 30 days
// of events.
const maxLookback = 30 * 24 * time.Hour

// Processor implements provider.Provider: STRIPE_API_KEY (or
// STRIPE_API_KEY_ARN) fetches a lost payload and every thin event from
// STRIPE_API_URL (Stripe's by default). The mode is STRIPE_LIVEMODE's,
// or else the key's; Stripe's report that it could not create events is an alert;
// STRIPE_EVENTBRIDGE_DLQ_URL is the Stripe EventBridge dead-letter queue
// an erasure sweeps (Fetch.EventQueue). Without a key (a stack that takes no Stripe events, or delivers them
// to destinations only) the processor starts, and an event it would
// have to fetch is parked with the reason.
func (Provider) Processor(ctx context.Context, env *provider.Env) (provider.Fetch, error) {
	apiURL := env.Settings().String("STRIPE_API_URL", defaultAPIURL)
	dlq := env.Get("STRIPE_EVENTBRIDGE_DLQ_URL")
	if !env.HasSecret("STRIPE_API_KEY") {
		m, err := mode(ctx, env, nil)
		return provider.Fetch{Get: noKey, Pointer: isThin, Mode: m, Alert: alert, EventQueue: dlq, QueuedEvent: ParseEvent}, err
	}
	key, err := env.Secret(ctx, "STRIPE_API_KEY")
	if err != nil {
		return provider.Fetch{}, err
	}
	m, err := mode(ctx, env, key)
	if err != nil {
		return provider.Fetch{}, err
	}
	// A thin event is only a pointer: it is fetched on every attempt.
	return provider.Fetch{Get: fetchEvent(key, apiURL, env.HTTPClient()), Pointer: isThin, Mode: m, Alert: alert, EventQueue: dlq, QueuedEvent: ParseEvent}, nil
}

// noKey is the Get of a processor with no Stripe key: the event cannot
// be fetched, so it is parked with the reason.
func noKey(context.Context, string, []byte) ([]byte, error) {
	return nil, webhook.Permanent(errors.New("stripe: the event must be fetched and no Stripe key is set: set StripeApiKeyArn (STRIPE_API_KEY_ARN), then replay it"))
}

// Reconciler implements provider.Provider: with STRIPE_API_KEY (or its
// _ARN) set, the events of the types in STRIPE_EVENT_TYPES (required,
// comma-separated: the types the business handles) are listed, the first
// run going back STRIPE_EVENTS_LOOKBACK (default none, at most 30 days).
func (Provider) Reconciler(ctx context.Context, env *provider.Env) (provider.Source, error) {
	if !env.HasSecret("STRIPE_API_KEY") {
		return provider.Source{}, nil
	}
	r := env.Settings()
	apiURL := r.String("STRIPE_API_URL", defaultAPIURL)
	types := r.List("STRIPE_EVENT_TYPES")
	lookback := r.Duration("STRIPE_EVENTS_LOOKBACK", 0)
	if len(types) == 0 {
		r.Problem("STRIPE_EVENT_TYPES is empty: name the Stripe event types the business handles (comma-separated), or unset STRIPE_API_KEY and STRIPE_API_KEY_ARN to turn the Stripe source off")
	}
	if lookback > maxLookback {
		r.Problem("STRIPE_EVENTS_LOOKBACK=%s is longer than the 30 days Stripe lists events", lookback)
	}
	if err := r.Err(); err != nil {
		return provider.Source{}, err
	}
	key, err := env.Secret(ctx, "STRIPE_API_KEY")
	if err != nil {
		return provider.Source{}, err
	}
	events := NewEvents(key, apiURL, env.HTTPClient())
	// Only the types the business handles are listed: others would be
	// claimed only to be IGNORED.
	events.Types = types
	return provider.Source{List: events, Lookback: lookback}, nil
}

// KeyFromContext returns the Stripe secret key (STRIPE_API_KEY) the
// processor loaded, from the ctx a BusinessBuilder is given, so the
// business calls Stripe with the same key rather than loading it again;
// nil when ctx carries no environment or the key is not set.
func KeyFromContext(ctx context.Context) (provider.Secret, error) {
	env := provider.EnvFromContext(ctx)
	if env == nil || !env.HasSecret("STRIPE_API_KEY") {
		return nil, nil
	}
	return env.Secret(ctx, "STRIPE_API_KEY")
}

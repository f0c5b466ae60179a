package verify

import (
	"context"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// Verifier authenticates one provider's deliveries and returns the events
// a delivery carries (one, or a batch), each with its key, type and
// occurrence time; or an error wrapping a webhook error kind.
type Verifier interface {
	Verify(ctx context.Context, r webhook.Request) ([]webhook.Event, error)
}

// Options are the settings some verifiers take besides their secrets.
type Options struct {
	StripeTolerance time.Duration    // Stripe-Signature's tolerance; zero means 300s
	Now             func() time.Time // the clock; nil means time.Now
}

// Spec is everything hookinbox knows about one provider. A provider is
// data, not a branch: the receiver routes {provider} to
// the verifier its Spec builds, the settings read its variables, and the
// template has a parameter per variable. Adding a provider is one file
// with its verifier and one line in Specs.
type Spec struct {
	// Name is the {provider} path segment and the prefix of its keys.
	Name string
	// SecretEnv names the variable holding the provider's secrets, a
	// comma-separated list (several while rotating); SecretEnv+"_ARN"
	// names a Secrets Manager secret holding the same list. The provider
	// is enabled when either is set.
	SecretEnv string
	// Unsigned means nothing the provider sends is signed (GoPay): the
	// secret is an API credential for the processor, the receiver never
	// reads it, and New gets none.
	Unsigned bool
	// TypeUnsigned means the event type comes from a header the signature
	// does not cover (GitHub's X-GitHub-Event, Shopify's X-Shopify-Topic):
	// whoever holds one captured body can send it under any type, so the
	// type is never a metric dimension as it is (TypeBounded).
	TypeUnsigned bool
	// Method is the HTTP method the provider delivers with; "" is POST.
	Method string
	// Accepted is the body answered once every event of a delivery is
	// claimed, as text/plain; "" answers {"status": "accepted"} (or
	// "duplicate") as JSON.
	Accepted string
	// New builds the verifier from the current secrets; it reports a
	// secret that cannot be used, without naming it.
	New func(secrets []string, o Options) (Verifier, error)
}

// Specs lists every provider hookinbox speaks.
var Specs = []Spec{
	{Name: StripeProvider, SecretEnv: "STRIPE_WEBHOOK_SECRET", New: newStripe},
	{Name: GitHubProvider, SecretEnv: "GITHUB_WEBHOOK_SECRET", TypeUnsigned: true, New: func(s []string, _ Options) (Verifier, error) {
		return &GitHub{Secrets: s}, checkSecrets(GitHubProvider, s)
	}},
	{Name: ShopifyProvider, SecretEnv: "SHOPIFY_WEBHOOK_SECRET", TypeUnsigned: true, New: func(s []string, _ Options) (Verifier, error) {
		return &Shopify{Secrets: s}, checkSecrets(ShopifyProvider, s)
	}},
	{Name: StandardProvider, SecretEnv: "STANDARD_WEBHOOK_SECRET", New: func(s []string, o Options) (Verifier, error) {
		v := &Standard{Secrets: s, Now: o.Now}
		return v, v.Validate()
	}},
	{Name: AdyenProvider, SecretEnv: "ADYEN_HMAC_KEY", Accepted: AdyenAccepted, New: func(s []string, _ Options) (Verifier, error) { v := &Adyen{Keys: s}; return v, v.Validate() }},
	{Name: GoPayProvider, SecretEnv: "GOPAY_CLIENT_SECRET", Unsigned: true, Method: GoPayMethod, New: func([]string, Options) (Verifier, error) { return GoPay{}, nil }},
}

// Lookup returns the Spec named name.
func Lookup(name string) (Spec, bool) {
	for _, s := range Specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// TypeBounded reports whether provider's event types form a set no one
// without the signing secret can add to: the provider is registered and
// its type is signed (Stripe, Standard Webhooks, Adyen) or fixed by
// hookinbox (GoPay). It is the bound
// of the EventType metric dimension where the business is not known (the
// receiver), for metrics.Recorder.WithEventTypes.
func TypeBounded(provider, _ string) bool {
	s, ok := Lookup(provider)
	return ok && !s.TypeUnsigned
}

// newStripe adapts the Stripe verifier to the Stripe-Signature header.
func newStripe(secrets []string, o Options) (Verifier, error) {
	s := &Stripe{Secrets: secrets, Tolerance: o.StripeTolerance, Now: o.Now}
	return stripeRequest{s}, s.Validate()
}

type stripeRequest struct{ s *Stripe }

func (v stripeRequest) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	ev, err := v.s.Verify(r.Header["stripe-signature"], r.Body)
	if err != nil {
		return nil, err
	}
	return []webhook.Event{ev}, nil
}

package mollie

import (
	"context"

	"github.com/hookinbox/hookinbox/provider"
)

// secretEnv names the variable holding the API key the processor fetches
// payments with ("live_..." or "test_..."); secretEnv+"_ARN" names a
// Secrets Manager secret holding it. Mollie is enabled when either is set.
const secretEnv = "MOLLIE_API_KEY"

// apiURLEnv names the variable holding Mollie's API base URL; unset means
// defaultAPIURL. Local runs point it at the stand-in.
const apiURLEnv = "MOLLIE_API_URL"

// Provider is Mollie's payment webhooks, for the registry: id-only
// notifications whose payment the processor fetches on every attempt.
type Provider struct {
	provider.NoSource
}

// Name is "mollie".
func (Provider) Name() string { return Name }

// Webhook: POST /webhooks/mollie, unsigned, id-only.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{SecretEnv: secretEnv, Unsigned: true, IDOnly: true, Subjects: subjects}
}

// Verifier needs no secret: nothing Mollie sends is signed.
func (Provider) Verifier([]string, *provider.Env) (provider.Verifier, error) { return verifier{}, nil }

// Processor fetches every notification's payment with the API key in
// secretEnv from the API at apiURLEnv; without a key, nothing. The
// business sees the payment's status as the event's type.
func (Provider) Processor(ctx context.Context, env *provider.Env) (provider.Fetch, error) {
	key, err := env.Secret(ctx, secretEnv)
	if err != nil || key == nil {
		return provider.Fetch{}, err
	}
	get := payments(key, env.Settings().String(apiURLEnv, defaultAPIURL), env.HTTPClient())
	return provider.Fetch{
		Get:  func(ctx context.Context, id string, _ []byte) ([]byte, error) { return get(ctx, id) },
		Type: Status,
	}, nil
}

package mollie

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
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
	return provider.Webhook{SendHelp: sendHelp, SendExamples: sendExamples, SecretEnv: secretEnv, Unsigned: true, IDOnly: true}
}

// Verifier needs no secret: nothing Mollie sends is signed.
func (Provider) Verifier([]string, *provider.Env) (provider.Verifier, error) { return Verifier{}, nil }

// Sign returns Mollie's notification of the payment ev is about: ev.ID,
// or else the id of the payment in ev.Body (as Mollie's API serves it).
// Mollie signs nothing, so secrets and at are not used.
func (Provider) Sign(ev provider.TestEvent, _ []string, _ time.Time) (webhook.Request, error) {
	id := ev.ID
	if id == "" {
		var p struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(ev.Body, &p); err != nil {
			return webhook.Request{}, fmt.Errorf("mollie: the body is not a payment: %w", err)
		}
		id = p.ID
	}
	if err := CheckID(id); err != nil {
		return webhook.Request{}, err
	}
	body, header := Notify(id)
	return webhook.Request{Method: http.MethodPost, Header: header, Body: body}, nil
}

// Processor fetches every notification's payment with the API key in
// secretEnv from the API at apiURLEnv; without a key, nothing. The
// business sees the payment's status as the event's type.
func (Provider) Processor(ctx context.Context, env *provider.Env) (provider.Fetch, error) {
	key, err := env.Secret(ctx, secretEnv)
	if err != nil || key == nil {
		return provider.Fetch{}, err
	}
	get := Payments(key, env.Reader().String(apiURLEnv, defaultAPIURL), env.HTTPClient())
	return provider.Fetch{
		Get:     func(ctx context.Context, id string, _ []byte) ([]byte, error) { return get(ctx, id) },
		Pointer: provider.Always,
		Type:    Status,
	}, nil
}

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `POST id=<payment id>, unsigned as Mollie sends it; given a
payment file (testdata/mollie/payment.paid.json) it first sets
that payment on the local stack's Mollie stand-in.`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send mollie testdata/mollie/payment.paid.json --times 2",
}

package paddle

import (
	"errors"
	"net/http"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// SecretEnv names the variable holding the notification destination's
// secret keys, comma-separated while rotating; SecretEnv+"_ARN" names a
// Secrets Manager secret holding them.
const SecretEnv = "PADDLE_WEBHOOK_SECRET"

// ToleranceEnv names the variable holding Verifier.Tolerance as a Go
// duration ("300s"); unset means DefaultTolerance.
const ToleranceEnv = "PADDLE_TOLERANCE"

// Provider is Paddle Billing, for the registry. Paddle signs every
// notification and carries the whole event, so nothing is fetched and
// nothing is reconciled.
type Provider struct {
	provider.NoFetch
	provider.NoSource
}

// Name is "paddle".
func (Provider) Name() string { return Name }

// Webhook: POST /webhooks/paddle, signed with the keys in SecretEnv.
func (Provider) Webhook() provider.Webhook { return provider.Webhook{SecretEnv: SecretEnv} }

// Verifier verifies with secrets and the tolerance in ToleranceEnv.
func (Provider) Verifier(secrets []string, env *provider.Env) (provider.Verifier, error) {
	r := env.Reader()
	v := &Verifier{Secrets: secrets, Tolerance: r.Duration(ToleranceEnv, DefaultTolerance), Now: env.Now}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return v, v.Validate()
}

// Sign returns ev.Body as Paddle sends it, signed at at with every secret
// (one h1 each, as while a key rotates).
func (Provider) Sign(ev provider.TestEvent, secrets []string, at time.Time) (webhook.Request, error) {
	if len(secrets) == 0 {
		return webhook.Request{}, errors.New("paddle: no secret key to sign with")
	}
	return webhook.Request{
		Method: http.MethodPost,
		Header: map[string]string{"content-type": "application/json", SignatureHeader: Sign(ev.Body, at, secrets...)},
		Body:   ev.Body,
	}, nil
}

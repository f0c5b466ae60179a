package paddle

import (
	"errors"
	"net/http"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// secretEnv names the variable holding the notification destination's
// secret keys, comma-separated while rotating; secretEnv+"_ARN" names a
// Secrets Manager secret holding them.
const secretEnv = "PADDLE_WEBHOOK_SECRET"

// toleranceEnv names the variable holding Verifier.Tolerance as a Go
// duration ("300s"); unset means defaultTolerance.
const toleranceEnv = "PADDLE_TOLERANCE"

// Provider is Paddle Billing, for the registry. Paddle signs every
// notification and carries the whole event, so nothing is fetched and
// nothing is reconciled.
type Provider struct {
	provider.NoFetch
	provider.NoSource
}

// Name is "paddle".
func (Provider) Name() string { return Name }

// Webhook: POST /webhooks/paddle, signed with the keys in secretEnv.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{SendHelp: sendHelp, SendExamples: sendExamples, SecretEnv: secretEnv}
}

// Verifier verifies with secrets and the tolerance in toleranceEnv.
func (Provider) Verifier(secrets []string, env *provider.Env) (provider.Verifier, error) {
	r := env.Reader()
	v := &Verifier{Secrets: secrets, Tolerance: r.Duration(toleranceEnv, defaultTolerance), Now: env.Now}
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
		Header: map[string]string{"content-type": "application/json", signatureHeader: Sign(ev.Body, at, secrets...)},
		Body:   ev.Body,
	}, nil
}

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `Paddle-Signature (ts=<unix>;h1=<hex HMAC of ts:body>, one h1 per
secret key)`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send paddle testdata/paddle/transaction.completed.json",
}

package paddle

import (
	"github.com/hookinbox/hookinbox/provider"
)

// secretEnv names the variable holding the notification destination's
// secret keys, comma-separated while rotating; secretEnv+"_ARN" names a
// Secrets Manager secret holding them.
const secretEnv = "PADDLE_WEBHOOK_SECRET"

// toleranceEnv names the variable holding verifier.Tolerance as a Go
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
	return provider.Webhook{SecretEnv: secretEnv, Subjects: subjects}
}

// Verifier implements provider.Provider: secrets, and the tolerance in
// toleranceEnv.
func (Provider) Verifier(secrets []string, env *provider.Env) (provider.Verifier, error) {
	r := env.Settings()
	v := &verifier{Secrets: secrets, Tolerance: r.Duration(toleranceEnv, defaultTolerance), Now: env.Now}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return v, v.Validate()
}

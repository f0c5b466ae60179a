package standard

import (
	"github.com/hookinbox/hookinbox/provider"
)

// Provider is Standard Webhooks: messages signed in webhook-signature,
// v1 (HMAC) or v1a (ed25519) (Verifier).
type Provider struct {
	provider.NoFetch
	provider.NoSource
}

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Webhook implements provider.Provider.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{SecretEnv: "STANDARD_WEBHOOK_SECRET"}
}

// Verifier implements provider.Provider.
func (Provider) Verifier(secrets []string, env *provider.Env) (provider.Verifier, error) {
	v := &Verifier{Secrets: secrets, Now: env.Now}
	return v, v.Validate()
}

package adyen

import (
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Provider is Adyen: standard notifications, each item signed in its
// additionalData.hmacSignature (Verifier).
type Provider struct {
	provider.NoFetch
	provider.NoSource
}

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Webhook implements provider.Provider.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{SecretEnv: "ADYEN_HMAC_KEY", Accepted: Accepted}
}

// Verifier implements provider.Provider.
func (Provider) Verifier(secrets []string, _ *provider.Env) (provider.Verifier, error) {
	v := &Verifier{Keys: secrets}
	return v, v.Validate()
}

// Sign implements provider.Provider: every item of the notification
// ev.Body signed again under the first hex key.
func (Provider) Sign(ev provider.TestEvent, secrets []string, _ time.Time) (webhook.Request, error) {
	key, err := provider.FirstSecret(Name, secrets)
	if err != nil {
		return webhook.Request{}, err
	}
	body, err := SignFile(ev.Body, key)
	if err != nil {
		return webhook.Request{}, err
	}
	return webhook.Request{Method: "POST", Header: provider.JSONHeader(), Body: body}, nil
}

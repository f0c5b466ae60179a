package adyen

import (
	"context"
	"fmt"

	"github.com/hookinbox/hookinbox/provider"
)

// Provider is Adyen: standard notifications, each item signed in its
// additionalData.hmacSignature (verifier).
type Provider struct {
	provider.NoSource
}

// Processor implements provider.Provider: nothing is fetched; the mode
// is ADYEN_LIVE's, Adyen's own: "true" live, "false" test, empty not
// checked (Adyen is not set up: the template requires AdyenLive beside
// AdyenHmacKeyArn). No other provider's mode stands in for it.
func (Provider) Processor(_ context.Context, env *provider.Env) (provider.Fetch, error) {
	switch v := env.Get("ADYEN_LIVE"); v {
	case "true":
		return provider.Fetch{Mode: provider.ModeLive}, nil
	case "false":
		return provider.Fetch{Mode: provider.ModeTest}, nil
	case "":
		return provider.Fetch{Mode: provider.ModeUnchecked}, nil
	default:
		return provider.Fetch{}, fmt.Errorf("want ADYEN_LIVE (%q) true, false or empty", v)
	}
}

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Webhook implements provider.Provider.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{SecretEnv: "ADYEN_HMAC_KEY", Accepted: accepted, Subjects: subjects}
}

// Verifier implements provider.Provider.
func (Provider) Verifier(secrets []string, _ *provider.Env) (provider.Verifier, error) {
	v := &verifier{Keys: secrets}
	return v, v.Validate()
}

package gopay

import (
	"github.com/hookinbox/hookinbox/provider"
)

// Provider is GoPay: unsigned notifications carrying a payment id
// (verifier), the payment fetched from GoPay's API on every attempt, and
// the payments not final yet fetched again by the reconciler.
type Provider struct{}

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Webhook implements provider.Provider: GOPAY_CLIENT_SECRET is the API
// credential, which the receiver never reads.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{SecretEnv: "GOPAY_CLIENT_SECRET", Unsigned: true, IDOnly: true, Method: method, Subjects: subjects}
}

// Verifier implements provider.Provider.
func (Provider) Verifier([]string, *provider.Env) (provider.Verifier, error) { return verifier{}, nil }

package standard

import (
	"slices"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
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
	return provider.Webhook{
		SendHelp: sendHelp, SendExamples: sendExamples,
		SecretEnv: "STANDARD_WEBHOOK_SECRET",
		Variants:  []provider.Variant{{Name: "v1a", Usage: "standard: sign v1a (ed25519) only, with the whsk_ keys among the secrets"}},
	}
}

// Verifier implements provider.Provider.
func (Provider) Verifier(secrets []string, env *provider.Env) (provider.Verifier, error) {
	v := &Verifier{Secrets: secrets, Now: env.Now}
	return v, v.Validate()
}

// Sign implements provider.Provider: ev.Body as message ev.ID (a fresh
// msg_ id when empty), signed with every secret that can sign (whsec_:
// v1, whsk_: v1a); variant "v1a" signs with the whsk_ keys only.
func (Provider) Sign(ev provider.TestEvent, secrets []string, at time.Time) (webhook.Request, error) {
	if ev.Variant == "v1a" {
		secrets = slices.DeleteFunc(slices.Clone(secrets), func(s string) bool { return !strings.HasPrefix(strings.TrimSpace(s), "whsk_") })
	}
	if _, err := provider.FirstSecret(Name, secrets); err != nil {
		return webhook.Request{}, err
	}
	id := ev.ID
	if id == "" {
		id = "msg_" + provider.Token()
	}
	h, err := headers(id, at, secrets, ev.Body)
	if err != nil {
		return webhook.Request{}, err
	}
	return webhook.Request{Method: "POST", Header: h, Body: ev.Body}, nil
}

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `Standard Webhooks webhook-id, -timestamp, -signature (v1,<base64>
HMAC of id.timestamp.body under each whsec_ secret, v1a,<base64>
ed25519 signature under each whsk_ key); a fresh msg_ id unless
--id; --v1a signs v1a only, with the whsk_ keys of --secret or
the local stack's signing key`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send standard testdata/standard/invoice.paid.json --v1a",
}

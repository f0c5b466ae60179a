package gopay

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Provider is GoPay: unsigned notifications carrying a payment id
// (Verifier), the payment fetched from GoPay's API on every attempt, and
// the payments not final yet fetched again by the reconciler.
type Provider struct{}

// Name implements provider.Provider.
func (Provider) Name() string { return Name }

// Webhook implements provider.Provider: GOPAY_CLIENT_SECRET is the API
// credential, which the receiver never reads.
func (Provider) Webhook() provider.Webhook {
	return provider.Webhook{SendHelp: sendHelp, SendExamples: sendExamples, SecretEnv: "GOPAY_CLIENT_SECRET", Unsigned: true, IDOnly: true, Method: Method}
}

// Verifier implements provider.Provider.
func (Provider) Verifier([]string, *provider.Env) (provider.Verifier, error) { return Verifier{}, nil }

// Sign implements provider.Provider: GET ?id=<payment id>, unsigned, as
// GoPay notifies; the id is ev.ID or the id of the payment ev.Body.
func (Provider) Sign(ev provider.TestEvent, _ []string, _ time.Time) (webhook.Request, error) {
	id := ev.ID
	if id == "" {
		var p struct {
			ID json.Number `json:"id"`
		}
		if err := json.Unmarshal(ev.Body, &p); err != nil || p.ID == "" {
			return webhook.Request{}, fmt.Errorf("gopay: the body is not a payment with an id")
		}
		id = p.ID.String()
	}
	if err := checkID(id); err != nil {
		return webhook.Request{}, err
	}
	return webhook.Request{Method: Method, Header: map[string]string{}, Query: map[string]string{"id": id}}, nil
}

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `GET ?id=<payment id>, unsigned as GoPay sends it; given a payment
file (testdata/gopay/payment.PAID.json) it first sets that payment
on the local stack's GoPay stand-in, whose API the processor asks.`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send gopay testdata/gopay/payment.PAID.json --times 2",
}

package standard

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sender is how tools send Standard Webhooks test deliveries: a message
// signed v1 under each whsec_ secret and v1a under each whsk_ key, or
// (variant "v1a") v1a only.
func Sender() sample.Sender {
	return sample.Sender{Provider: Provider{}, Sign: sign, Sample: sampleEvent, Help: sendHelp, Examples: sendExamples,
		Variants: []sample.Flag{{Name: "v1a", Usage: "standard: sign v1a (ed25519) only, with the whsk_ keys among the secrets"}}}
}

// sign is Standard Webhooks' Sign: ev.Body as message ev.ID (a fresh
// msg_ id when empty), signed with every secret that can sign (whsec_:
// v1, whsk_: v1a); variant "v1a" signs with the whsk_ keys only.
func sign(ev sample.Event, secrets []string, at time.Time) (webhook.Request, error) {
	if ev.Variant == "v1a" {
		secrets = slices.DeleteFunc(slices.Clone(secrets), func(s string) bool { return !strings.HasPrefix(strings.TrimSpace(s), "whsk_") })
	}
	if _, err := sample.FirstSecret(Name, secrets); err != nil {
		return webhook.Request{}, err
	}
	id := ev.ID
	if id == "" {
		id = "msg_" + sample.Token()
	}
	h, err := headers(id, at, secrets, ev.Body)
	if err != nil {
		return webhook.Request{}, err
	}
	return webhook.Request{Method: "POST", Header: h, Body: ev.Body}, nil
}

// sampleEvent is Standard Webhooks' Sample: the message id ev.ID or a fresh
// msg_ one, the body's type, and, when ev.Fresh, a fresh data.id (the
// same prefix, new letters).
func sampleEvent(ev sample.Event) (sample.Event, error) {
	var msg struct {
		Type string `json:"type"`
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(ev.Body, &msg); err != nil || msg.Type == "" {
		return ev, fmt.Errorf("standard: not a message with a type: %v", err)
	}
	if ev.ID == "" {
		ev.ID = "msg_" + sample.Token()
	}
	ev.Type = msg.Type
	if old := msg.Data.ID; ev.Fresh && old != "" {
		ev.Body = sample.ReplaceString(ev.Body, old, sample.FreshID(old))
	}
	return ev, nil
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

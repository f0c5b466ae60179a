package destination

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// Body is the JSON every destination receives for one event: the HTTP
// request's body, and an EventBridge event's detail. Its shape is a
// contract; fields may be added, never renamed or removed.
type Body struct {
	// ID is the delivery's webhook-id (WebhookID): the same on every
	// delivery of the event to this destination.
	ID string `json:"id"`
	// Provider and Type are the event's provider and type ("stripe",
	// "checkout.session.completed").
	Provider string `json:"provider"`
	Type     string `json:"type"`
	// Key is the event's inbox key, "<provider>#<event id>": the same for
	// every destination, so consumers of several can deduplicate by it.
	Key string `json:"key"`
	// ReceivedAt is when hookinbox claimed the event, RFC 3339 in UTC.
	ReceivedAt string `json:"received_at"`
	// Payload is the provider's verified payload as it sent it: its JSON,
	// or a JSON string holding it when it is not JSON.
	Payload json.RawMessage `json:"payload"`
}

// effectName returns the name of the destination's effect in the ledger,
// "destination:<name>".
func effectName(name string) string { return "destination:" + name }

// WebhookID returns the webhook-id of the event key's deliveries to the
// destination name: "msg_" and 32 hex digits of the SHA-256 of the
// effect's idempotency key (effects.IdempotencyKey). It is the same on
// every attempt and replay, and differs between destinations, so a
// receiver that remembers it ignores a redelivery.
func WebhookID(key webhook.Key, name string) string {
	sum := sha256.Sum256([]byte(effects.IdempotencyKey(key, effectName(name))))
	return "msg_" + hex.EncodeToString(sum[:16])
}

// newBody returns the body of ev for the destination name, encoded.
func newBody(ev webhook.Event, name string) []byte {
	payload := json.RawMessage(ev.Raw)
	if !json.Valid(ev.Raw) {
		payload, _ = json.Marshal(string(ev.Raw)) // a string always encodes
	}
	received := ""
	if !ev.Received.IsZero() {
		received = ev.Received.UTC().Format(time.RFC3339)
	}
	b, _ := json.Marshal(Body{ // valid JSON fields only: it always encodes
		ID: WebhookID(ev.Key(), name), Provider: ev.Provider, Type: ev.Type,
		Key: string(ev.Key()), ReceivedAt: received, Payload: payload,
	})
	return b
}

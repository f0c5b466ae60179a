package destination

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"time"
	"unicode/utf8"

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
	// Payload is the provider's verified payload, byte for byte as it
	// sent it when it is JSON (a consumer can hash it: it is the body's
	// bytes after the first `"payload":`, less the final `}`), or a JSON
	// string holding it when it is not (or is not UTF-8, as JSON must be).
	// It is always the last field.
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

// body is what a destination receives for one event, in three parts so
// the provider's bytes are neither copied nor re-encoded: head (the
// envelope's other fields, then "payload":), the payload, and "}".
type body struct {
	head, payload []byte
}

// bodyTail closes the envelope after the payload.
var bodyTail = []byte("}")

// newBody returns the body of ev for the destination name: Body encoded,
// with the payload last, exactly the bytes of ev.Raw when they are JSON
// (whitespace, key order and escapes kept), or a JSON string of them.
// JSON is UTF-8: bytes that are not (json.Valid accepts them in a
// string) would make the body one that Standard Webhooks libraries
// cannot verify, so they go as a string too, with U+FFFD for each.
func newBody(ev webhook.Event, name string) body {
	payload := ev.Raw
	if !json.Valid(payload) || !utf8.Valid(payload) {
		payload, _ = json.Marshal(string(ev.Raw)) // a string always encodes
	}
	received := ""
	if !ev.Received.IsZero() {
		received = ev.Received.UTC().Format(time.RFC3339)
	}
	// Payload is Body's last field: encoded with a null payload, the
	// envelope ends `"payload":null}`, and the provider's bytes replace
	// the null.
	env, _ := json.Marshal(Body{ // valid JSON fields only: it always encodes
		ID: WebhookID(ev.Key(), name), Provider: ev.Provider, Type: ev.Type,
		Key: string(ev.Key()), ReceivedAt: received, Payload: json.RawMessage("null"),
	})
	return body{head: env[:len(env)-len("null}")], payload: payload}
}

// parts returns the body's bytes in order, the payload not copied.
func (b body) parts() [][]byte { return [][]byte{b.head, b.payload, bodyTail} }

// size returns the body's length in bytes.
func (b body) size() int { return len(b.head) + len(b.payload) + len(bodyTail) }

// reader returns a reader of the body's bytes.
func (b body) reader() io.Reader {
	return io.MultiReader(bytes.NewReader(b.head), bytes.NewReader(b.payload), bytes.NewReader(bodyTail))
}

// String returns the body as one string: one copy, made only for a
// destination that needs one (an EventBridge entry's detail).
func (b body) String() string {
	var s strings.Builder
	s.Grow(b.size())
	for _, p := range b.parts() {
		s.Write(p)
	}
	return s.String()
}

package webhook

import (
	"fmt"
	"strings"
	"time"
)

// MaxEventIDLen is the longest event ID hookinbox accepts, in bytes.
const MaxEventIDLen = 255

// Event is a webhook delivery whose signature has been verified. Only the
// fields hookinbox needs to route and deduplicate are parsed; Raw keeps the
// exact bytes the provider signed.
type Event struct {
	Provider string    // "stripe"
	ID       string    // the provider's event ID, e.g. "evt_1Nabc"
	Type     string    // e.g. "checkout.session.completed"
	Created  time.Time // when the provider created the event
	Livemode bool      // false for test-mode events
	Received time.Time // when hookinbox claimed the event (zero outside the processor)
	// Raw is the verified body, byte for byte; where the signed body
	// wraps the event (a GitHub hook with the form content type sends
	// payload=<URL-encoded JSON>), the event it carries, as JSON.
	Raw []byte
	// Account is the provider account the delivery names outside its
	// signed body (Shopify's X-Shopify-Shop-Domain: one app serves many
	// shops), or the one a reconciler read the event from, or "". Where
	// the signature does not cover it, nothing is
	// decided on it: it only files the event under that account, for an
	// erasure of the account's data (provider.Webhook.Subjects).
	Account string
	// IDOnly marks a notification that carries only the object's id, not
	// its content (GoPay): nothing in it is trusted, the processor fetches
	// the current state from the provider's API, and once an earlier
	// notification of the same id is finished, a new one claims the key
	// again so the new state is fetched too.
	IDOnly bool
}

// Key returns the event's inbox key, "<provider>#<event id>".
func (e Event) Key() Key { return NewKey(e.Provider, e.ID) }

// Key identifies one event in the inbox: "<provider>#<event id>", readable
// so an operator can find "stripe#evt_123" in the console.
type Key string

// NewKey returns the key of the event id from provider.
func NewKey(provider, id string) Key { return Key(provider + "#" + id) }

// ParseKey checks that s is a well-formed key and returns it.
func ParseKey(s string) (Key, error) {
	provider, id, ok := strings.Cut(s, "#")
	if !ok || provider == "" {
		return "", fmt.Errorf("%w: key %q is not <provider>#<event id>", ErrMalformed, s)
	}
	if err := ValidateEventID(id); err != nil {
		return "", err
	}
	return Key(s), nil
}

// Provider returns the provider part of the key.
func (k Key) Provider() string { p, _, _ := strings.Cut(string(k), "#"); return p }

// EventID returns the provider's event ID part of the key.
func (k Key) EventID() string { _, id, _ := strings.Cut(string(k), "#"); return id }

// String returns the key as stored.
func (k Key) String() string { return string(k) }

// ValidateEventID reports, as ErrMalformed, an event ID that cannot be a
// provider's: empty, longer than MaxEventIDLen bytes, or holding characters
// other than ASCII letters, digits, '_' and '-'.
func ValidateEventID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: no event id", ErrMalformed)
	case len(id) > MaxEventIDLen:
		return fmt.Errorf("%w: event id is %d bytes, more than %d", ErrMalformed, len(id), MaxEventIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%w: event id has character %q at byte %d", ErrMalformed, c, i)
		}
	}
	return nil
}

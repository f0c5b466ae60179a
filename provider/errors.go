package provider

import (
	"fmt"

	"github.com/hookinbox/hookinbox/webhook"
)

// Verification failures. Each wraps a webhook error kind, so a caller maps it
// to an HTTP status with errors.Is(err, webhook.ErrUnauthenticated) or
// errors.Is(err, webhook.ErrMalformed), and branches on the exact condition
// with errors.Is(err, provider.ErrStale) and the like. Verifiers return them
// wrapped with context; the context never holds a secret, a signature or
// payload content.
var (
	// ErrNoSignature: there is no signature header, it is malformed (for
	// Stripe: no t= timestamp, a part that is not key=value, two t= parts),
	// or it carries no signature of a scheme we accept (for Stripe: only v0,
	// no v1). Unauthenticated.
	ErrNoSignature = fmt.Errorf("no signature: %w", webhook.ErrUnauthenticated)

	// ErrBadSignature: no signature in the header matches the body under
	// any configured secret. Unauthenticated.
	ErrBadSignature = fmt.Errorf("signature mismatch: %w", webhook.ErrUnauthenticated)

	// ErrStale: the signature is valid but its timestamp is older than the
	// tolerance, as a replayed request would be. Unauthenticated.
	ErrStale = fmt.Errorf("stale signature: %w", webhook.ErrUnauthenticated)

	// ErrFuture: the signature is valid but its timestamp is further in the
	// future than the tolerance. Unauthenticated.
	ErrFuture = fmt.Errorf("signature from the future: %w", webhook.ErrUnauthenticated)

	// ErrNotJSON: the body is correctly signed but is not a JSON object.
	// Malformed.
	ErrNotJSON = fmt.Errorf("body is not a JSON object: %w", webhook.ErrMalformed)

	// ErrNotEvent: the body is a signed JSON object but not an event: it
	// has no type, its object is not "event", or a field has the wrong JSON
	// type. Malformed.
	ErrNotEvent = fmt.Errorf("body is not an event: %w", webhook.ErrMalformed)

	// ErrNoEventID: the signed event has no id. Malformed.
	ErrNoEventID = fmt.Errorf("no event id: %w", webhook.ErrMalformed)

	// ErrBadEventID: the signed event's id fails webhook.ValidateEventID
	// (too long, or characters other than letters, digits, '_' and '-').
	// Malformed.
	ErrBadEventID = fmt.Errorf("bad event id: %w", webhook.ErrMalformed)
)

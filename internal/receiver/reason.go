package receiver

import (
	"errors"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// The receiver's own refusals, before any provider reads the request.
var (
	errUnknownProvider  = errors.New("unknown provider")   // HTTP 404
	errMethodNotAllowed = errors.New("method not allowed") // HTTP 405
	errTooLarge         = errors.New("body too large")     // HTTP 413
)

// reasons names each refusal for metrics and logs, most specific first.
var reasons = []struct {
	err  error
	name string
}{
	{provider.ErrNoSignature, "no-signature"},
	{provider.ErrBadSignature, "bad-signature"},
	{provider.ErrStale, "stale"},
	{provider.ErrFuture, "future"},
	{provider.ErrNotJSON, "not-json"},
	{provider.ErrNotEvent, "not-event"},
	{provider.ErrNoEventID, "no-event-id"},
	{provider.ErrBadEventID, "bad-event-id"},
	{errTooLarge, "too-large"},
	{errUnknownProvider, "unknown-provider"},
	{errMethodNotAllowed, "method-not-allowed"},
	{webhook.ErrUnauthenticated, "unauthenticated"},
	{webhook.ErrMalformed, "malformed"},
}

// Reason returns a short fixed name for why a request was refused
// ("bad-signature", "stale", "too-large", ...), the Reason dimension of the
// VerifyFailed metric, or "" when err is none of the refusals above. The
// set is fixed, so an attacker cannot mint new metric dimensions.
func Reason(err error) string {
	for _, r := range reasons {
		if errors.Is(err, r.err) {
			return r.name
		}
	}
	return ""
}

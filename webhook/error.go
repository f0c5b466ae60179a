package webhook

import "errors"

// Error kinds. Adapters wrap them with context and callers branch on them
// with errors.Is; the receiver maps each to one HTTP status, the processor
// maps ErrPermanent to the dead-letter queue and everything else to a retry.
var (
	// ErrMalformed: the request or message cannot be understood (bad JSON,
	// no or implausible event id). HTTP 400; permanent in the processor.
	ErrMalformed = errors.New("malformed")

	// ErrUnauthenticated: the signature is missing or wrong, or its
	// timestamp is outside the tolerance. HTTP 401.
	ErrUnauthenticated = errors.New("unauthenticated")

	// ErrUnknownProvider: no verifier is configured for the provider. HTTP 404.
	ErrUnknownProvider = errors.New("unknown provider")

	// ErrMethodNotAllowed: the request is not a POST. HTTP 405.
	ErrMethodNotAllowed = errors.New("method not allowed")

	// ErrTooLarge: the body is over the configured limit. HTTP 413.
	ErrTooLarge = errors.New("body too large")

	// ErrBusy: the event cannot be taken now but will be later: an id-only
	// notification arrived while the previous one's fetch was running, so
	// the provider must deliver it again. HTTP 503.
	ErrBusy = errors.New("busy")
	// ErrPermanent: retrying cannot help (unknown product, mapping gap,
	// invalid payload). The processor parks the event in the DLQ at once.
	ErrPermanent = errors.New("permanent")

	// ErrNoHandler: nothing handles this event type. The processor marks
	// the event IGNORED and acknowledges it.
	ErrNoHandler = errors.New("no handler for event type")
)

// IsPermanent reports whether err can never succeed on retry: ErrPermanent
// or ErrMalformed anywhere in its chain.
func IsPermanent(err error) bool {
	return errors.Is(err, ErrPermanent) || errors.Is(err, ErrMalformed)
}

// Permanent marks err as permanent, keeping it in the chain.
func Permanent(err error) error {
	if err == nil || IsPermanent(err) {
		return err
	}
	return permanentError{err}
}

type permanentError struct{ err error }

func (e permanentError) Error() string   { return e.err.Error() }
func (e permanentError) Unwrap() []error { return []error{e.err, ErrPermanent} }

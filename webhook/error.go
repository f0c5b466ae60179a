package webhook

import (
	"errors"
	"time"
)

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

	// ErrBusy: nothing was tried, and the event can be taken later: an
	// id-only notification arrived while the previous one's fetch was
	// running (HTTP 503: the provider delivers it again), or every
	// destination left was at its concurrency limit. The processor takes
	// such an attempt back and brings the event back soon.
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

// RetryAfter marks err as asking for no retry sooner than d (a 429 or 503
// with Retry-After): the processor waits at least that long, up to its
// longest backoff. The error's text is err's.
func RetryAfter(err error, d time.Duration) error {
	if err == nil || d <= 0 {
		return err
	}
	return retryAfterError{err, d}
}

// RetryAfterOf returns the longest pause an error in err's tree marked by
// RetryAfter asks for (several parts of an event may each ask for
// theirs), or zero.
func RetryAfterOf(err error) time.Duration {
	var d time.Duration
	switch e := err.(type) {
	case nil:
		return 0
	case retryAfterError:
		d = e.d
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		d = max(d, RetryAfterOf(u.Unwrap()))
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			d = max(d, RetryAfterOf(e))
		}
	}
	return d
}

type retryAfterError struct {
	err error
	d   time.Duration
}

func (e retryAfterError) Error() string { return e.err.Error() }
func (e retryAfterError) Unwrap() error { return e.err }

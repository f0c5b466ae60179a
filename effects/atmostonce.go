package effects

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// ErrOutcomeUnknown: an at-most-once effect (AtMostOnce) may have run, but
// no attempt recorded its outcome: an attempt recorded that it was starting
// the call and then died, timed out, or could not write the outcome. The
// effect is not run again; the error comes marked webhook.Permanent, so the
// processor parks the event with the reason (the DLQ alarm sees it). A
// person checks the outside system and then resolves it (docs/operations.md).
var ErrOutcomeUnknown = errors.New("effect may have run; its outcome is unknown, so it is not repeated")

// AtMostOnce runs fn through r as effect name at most once, even when the
// outside system takes no idempotency key (an email through SES, an SMS,
// a call to an API without one). The ledger first records, with a
// conditional write, that this attempt is starting it (an intent). After
// fn returns:
//
//   - nil: the outcome replaces the intent, written with retries until
//     shortly before the invocation ends.
//   - an error marked NotDone (the outside system refused the call, so
//     it certainly did not happen): the intent is released and the
//     error returned as it is; a retry runs fn again.
//   - any other error (a timeout, a reset connection: the call may have
//     happened): the intent stays and ErrOutcomeUnknown is returned,
//     marked webhook.Permanent.
//
// An attempt that finds another attempt's intent without an outcome
// returns ErrOutcomeUnknown at once and does not call fn.
func AtMostOnce(ctx context.Context, r Runner, name string, fn func(ctx context.Context, idempotencyKey string) (string, error)) error {
	return r.Run(ctx, Effect{Name: name, AtMostOnce: true, Fn: fn})
}

// notDone marks an error after which the effect certainly did not happen.
type notDone struct{ err error }

func (e notDone) Error() string { return e.err.Error() }
func (e notDone) Unwrap() error { return e.err }

// NotDone marks err, returned by an at-most-once effect's function, as
// meaning that the outside call certainly did not happen (the outside
// system answered with a refusal or a throttle), so a retry may make it.
// The kind of err (webhook.Permanent) is kept. NotDone(nil) is nil.
func NotDone(err error) error {
	if err == nil {
		return nil
	}
	return notDone{err} // a permanent err stays permanent through Unwrap
}

// IsNotDone reports whether err was marked with NotDone: the outside call
// certainly did not happen.
func IsNotDone(err error) bool {
	var nd notDone
	return errors.As(err, &nd)
}

// newAttemptID returns a random ID that tells one runner's intents from
// every other's.
func newAttemptID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return hex.EncodeToString(b[:])
}

// outcomeUnknown is the error of an at-most-once effect whose outcome no
// attempt recorded.
func outcomeUnknown(key webhook.Key, name string, started time.Time, cause error) error {
	at := ""
	if !started.IsZero() {
		at = " at " + started.UTC().Format(time.RFC3339)
	}
	if cause != nil {
		return webhook.Permanent(fmt.Errorf("effect %s of %s: %w (started%s; the call failed: %w)", name, key, ErrOutcomeUnknown, at, cause))
	}
	return webhook.Permanent(fmt.Errorf("effect %s of %s: %w (an earlier attempt started it%s and recorded no outcome)", name, key, ErrOutcomeUnknown, at))
}

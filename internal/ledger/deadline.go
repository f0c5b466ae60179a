package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

type recordDeadlineKey struct{}

// WithRecordDeadline returns a copy of ctx that tells the ledger how long
// it may keep trying to record an effect that has run: until t, even when
// ctx itself is cancelled or ends sooner (an effect cut off at its own
// deadline, say). The processor sets it a little before the invocation
// ends, so the outcome of the event is still written after it.
func WithRecordDeadline(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, recordDeadlineKey{}, t)
}

// recordContext returns the context to record an effect that has run with:
// ctx without its cancellation, ending at ctx's WithRecordDeadline when it has
// one, and ctx itself otherwise.
func recordContext(ctx context.Context) (context.Context, context.CancelFunc) {
	t, ok := ctx.Value(recordDeadlineKey{}).(time.Time)
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(context.WithoutCancel(ctx), t)
}

// persist calls write until it succeeds, fails permanently, or ctx ends,
// pausing 50 ms, 100 ms, ... up to 1 s between tries: the record of an
// effect that has run is worth the wait, since without it a retry repeats
// the effect (or, at most once, cannot tell).
func persist(ctx context.Context, write func(context.Context) error) error {
	pause := 50 * time.Millisecond
	for {
		err := write(ctx)
		if err == nil || webhook.IsPermanent(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// newAttemptID returns a random ID that tells one runner's intents from
// every other's.
func newAttemptID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return hex.EncodeToString(b[:])
}

// outcomeUnknown is the error of an at-most-once effect whose outcome no
// attempt recorded: effects.ErrOutcomeUnknown, permanent.
func outcomeUnknown(key webhook.Key, name string, started time.Time, cause error) error {
	at := ""
	if !started.IsZero() {
		at = " at " + started.UTC().Format(time.RFC3339)
	}
	if cause != nil {
		return webhook.Permanent(fmt.Errorf("effect %s of %s: %w (started%s; the call failed: %w)", name, key, effects.ErrOutcomeUnknown, at, cause))
	}
	return webhook.Permanent(fmt.Errorf("effect %s of %s: %w (an earlier attempt started it%s and recorded no outcome)", name, key, effects.ErrOutcomeUnknown, at))
}

// errInvalid: an effect the ledger cannot run, a programming error.
var errInvalid = errors.New("invalid effect")

// check reports, marked permanent, an effect the ledger cannot run.
func check(e effects.Effect, key webhook.Key) error {
	switch {
	case e.Name == "":
		return webhook.Permanent(fmt.Errorf("%w: empty effect name for %s", errInvalid, key))
	case e.Fn == nil:
		return webhook.Permanent(fmt.Errorf("%w: effect %s of %s has no function", errInvalid, e.Name, key))
	}
	return nil
}

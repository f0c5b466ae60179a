package effects

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"

	"github.com/hookinbox/hookinbox/webhook"
)

// errInvalid: an argument the helpers cannot use (an empty effect name,
// an item without its pk and sk, a version without an event ID). It is a
// programming error, so it comes marked webhook.Permanent.
var errInvalid = errors.New("invalid effect argument")

func invalidf(format string, args ...any) error {
	return webhook.Permanent(fmt.Errorf("%w: %s", errInvalid, fmt.Sprintf(format, args...)))
}

// Effect is one named effect of an event and how it must run.
type Effect struct {
	// Name identifies the effect within its event; it never changes, or a
	// retry runs the effect again under the new name.
	Name string
	// AtMostOnce makes the ledger record an intent before Fn and never
	// call Fn again for the event once an attempt may have called it
	// (see AtMostOnce). Without it the effect runs at least once, with the
	// same idempotency key on every attempt.
	AtMostOnce bool
	// Fn makes the effect happen: it receives an idempotency key derived
	// from the event key and the effect name, to pass to outside systems,
	// and returns a short outcome to record (such as the ID an outside
	// system gave it; "" for none).
	Fn func(ctx context.Context, idempotencyKey string) (result string, err error)
}

// Runner runs the named effects of one event, each once as far as the
// ledger records. Run is the only way to run an effect, so a wrapper that
// passes the Effect on keeps its guarantee.
type Runner interface {
	// Run runs e.Fn unless effect e.Name is already recorded for this
	// event, and records it, with e.Fn's result, when e.Fn returns nil.
	// An error from e.Fn is returned wrapped, with its kind
	// (webhook.Permanent) kept, and nothing is recorded. With
	// e.AtMostOnce it behaves as AtMostOnce describes.
	Run(ctx context.Context, e Effect) error
}

// Do runs fn through r as effect name, at least once: a retry after its
// record was lost runs it again with the same idempotency key.
func Do(ctx context.Context, r Runner, name string, fn func(ctx context.Context, idempotencyKey string) error) error {
	return r.Run(ctx, Effect{Name: name, Fn: func(ctx context.Context, ik string) (string, error) { return "", fn(ctx, ik) }})
}

// DoResult is Do for an fn that returns a short outcome, stored as
// Record.Result.
func DoResult(ctx context.Context, r Runner, name string, fn func(ctx context.Context, idempotencyKey string) (string, error)) error {
	return r.Run(ctx, Effect{Name: name, Fn: fn})
}

// check reports an effect the ledgers cannot run.
func (e Effect) check(key webhook.Key) error {
	switch {
	case e.Name == "":
		return invalidf("empty effect name for %s", key)
	case e.Fn == nil:
		return invalidf("effect %s of %s has no function", e.Name, key)
	}
	return nil
}

// Record is one finished effect of one event.
type Record struct {
	Effect         string      `json:"effect"`
	Key            webhook.Key `json:"key"`
	IdempotencyKey string      `json:"idempotency_key"`
	Result         string      `json:"result,omitempty"` // optional short outcome, e.g. an invoice ID
}

// maxIdempotencyKeyLen is the longest key IdempotencyKey returns, in
// bytes: Stripe's limit.
const maxIdempotencyKeyLen = 255

// IdempotencyKey returns the key that identifies effect of the event key
// to an outside system: "hookinbox:<provider>#<event id>:<effect>", or, when
// that is longer than 255 bytes (Stripe's limit), "hookinbox:sha256:" and
// the hex SHA-256 of that string. It is deterministic, so every attempt of
// the effect sends the same key.
func IdempotencyKey(key webhook.Key, effect string) string {
	k := "hookinbox:" + string(key) + ":" + effect
	if len(k) <= maxIdempotencyKeyLen {
		return k
	}
	sum := sha256.Sum256([]byte(k))
	return "hookinbox:sha256:" + hex.EncodeToString(sum[:])
}

func sortRecords(recs []Record) {
	sort.Slice(recs, func(i, j int) bool { return recs[i].Effect < recs[j].Effect })
}

// Package effects makes each business effect of a webhook event happen once
// although the event itself is delivered at least once and out of order.
//
// It offers four tools, one for each kind of effect, so that every effect
// is idempotent at its own level:
//
//   - The effect ledger (Ledger, MemoryLedger, Runner): each named effect of
//     an event is recorded when it finishes, so a retry after a partial
//     failure skips what is recorded and runs only the rest. Effects that
//     call outside systems receive an idempotency key derived from the event
//     key and the effect name (IdempotencyKey), so the window between an
//     effect finishing and its record being written is closed by the outside
//     system where it supports such keys.
//   - "Apply only if newer" (PutIfNewer, Version): absolute state written
//     with a version condition, so the final record is a pure function of the
//     set of events whatever their arrival order.
//   - "Delta as a per-event record" (AddDelta, Balance): an increment or
//     decrement stored as one record per event, summed on read, never plain
//     arithmetic on a counter.
//   - At most once (AtMostOnce), for an outside call that takes no
//     idempotency key (an email): the ledger records an intent before the
//     call and the outcome after it; an attempt that finds an intent
//     without an outcome, or whose call failed without a clear refusal
//     (NotDone), returns ErrOutcomeUnknown, marked permanent, instead of
//     calling again.
//
// Every effect runs through Runner.Run, described by an Effect: Do,
// DoResult and AtMostOnce build one. A wrapper (With and a Middleware)
// wraps only the effect's function and passes the rest on, so it cannot
// change how the effect runs.
//
// Guarantees: every write is one conditional PutItem; nothing reads and then
// writes. The record of an effect that has run is written with retries
// until the deadline WithRecordDeadline put in the context, or its end.
// Do gives "at most once as far as the ledger records": an effect whose
// function succeeded but whose record could not be written runs again on
// the next attempt, with the same idempotency key. AtMostOnce never runs
// fn twice for one event and effect; the price is an event parked when no
// attempt can tell whether the call happened. All types are safe for
// concurrent use.
//
// The DynamoDB helpers assume a table whose key is pk (string, partition) and
// sk (string, sort).
//
// It is part of hookinbox's public API for business code, with effects,
// stripeevent and processorfn: code in another module imports it to
// handle events. Within v0.x a minor release may change it, and the
// CHANGELOG says how.
package effects

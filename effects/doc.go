// Package effects makes each business effect of a webhook event happen
// once although the event is delivered at least once and out of order.
// A handler runs every effect through the Runner it is given, one tool
// for each kind of effect:
//
//   - Do and DoResult: the ledger records each named effect when it
//     finishes, so a retry runs only what is not recorded. An effect whose
//     record was lost runs again, with the same idempotency key
//     (IdempotencyKey) to pass to outside systems.
//   - AtMostOnce, for an outside call that takes no idempotency key (an
//     email): it never runs twice; when no attempt can tell whether it
//     ran, the event is parked with ErrOutcomeUnknown for a person.
//   - PutIfNewer and Version: absolute state written only if newer, so
//     the record is the same whatever the order the events arrive in.
//   - PutOnce, AddDelta and Balance: per-event records, and deltas summed
//     on read, never arithmetic on a counter.
//
// Every write is one conditional PutItem; nothing reads and then writes.
// The DynamoDB helpers assume a table whose key is pk and sk (strings).
// NewMemoryLedger gives a Runner for unit tests. All types are safe for
// concurrent use.
package effects

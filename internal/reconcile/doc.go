// Package reconcile finds what the webhook path lost and puts it back on
// the events queue: the scheduled reconciler function's handler. Each run
// stops its parts when the invocation's deadline is closer than
// Config.Margin.
//
//   - Stuck claims: RECEIVED or FAILED claims whose last message went out
//     more than StuckAfter ago, and PROCESSING events whose lease ended
//     that long ago, are re-enqueued, each under one conditional write
//     (inbox.Store.MarkEnqueued). They are read from the sparse "pending"
//     index shard by shard, from a shard that rotates every minute, so one
//     busy shard cannot starve the others.
//   - Missed events, from each provider's Source (provider.Provider's
//     Reconciler), each from a checkpoint of its own: a provider.Lister is
//     read about a page at a time, oldest first, and each event claimed and
//     enqueued through the intake, so one that never arrived is processed
//     and one that did is a duplicate. The checkpoint advances only past
//     events handled; one that fails in 3 runs while later ones pass is
//     recorded ("skipped#<key>"), logged and counted, and passed. A
//     provider.Sweeper fetches again, a budget a run, the objects last seen
//     in a state that is not final.
//
// Each run records its metrics (StuckClaims, which an alarm watches,
// Missed, Skipped, CheckpointLag, ...) with error text scrubbed of email
// addresses. Re-enqueueing is at least once: the processor's lease and
// ledger make a second message harmless, and two runs at once do no harm.
package reconcile

// Package reconcile finds what the webhook path lost and puts it back on
// the events queue. It is the scheduled reconciler function's handler.
//
// Each run does two things:
//
//   - Stuck claims: claims in RECEIVED or FAILED whose last message went
//     out more than StuckAfter ago (a crash between claim and send, a lost
//     message) are re-enqueued, each guarded by one conditional write
//     (inbox.Store.MarkEnqueued), found through the sparse "pending" index
//     without scanning the table. Leases that ended long ago are counted
//     too; their messages are in the DLQ.
//   - Missed events: the provider's event list (Stripe's /v1/events) since
//     a checkpoint is claimed and enqueued through the receiver's own path
//     (package intake), so an event that never arrived as a webhook is
//     processed, and one that did is a duplicate the inbox refuses. The
//     checkpoint, kept in the inbox table, advances only past events
//     handled: a failure leaves it before the event that failed.
//
// Each run records its metrics (internal/metrics: StuckClaims, which the
// stuck-claims alarm watches, Reconciled, OverdueLeases, ReconcileErrors,
// Missed and CheckpointLag) as CloudWatch embedded-metric-format lines.
// Re-enqueueing is at least once; the processor's lease and effect ledger
// make a second message harmless. A Handler is safe for concurrent use,
// and two runs at once do no harm beyond duplicate messages.
package reconcile

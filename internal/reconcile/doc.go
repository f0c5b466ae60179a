// Package reconcile finds what the webhook path lost and puts it back on
// the events queue. It is the scheduled reconciler function's handler.
//
// Each run does two things, each stopping when the invocation's deadline
// is closer than Config.Margin:
//
//   - Stuck claims: claims in RECEIVED or FAILED whose last message went
//     out more than StuckAfter ago (a crash between claim and send, a lost
//     message), and PROCESSING events whose lease ended more than
//     StuckAfter ago (a worker died), are re-enqueued, each guarded by one
//     conditional write (inbox.Store.MarkEnqueued). They are found through
//     the sparse "pending" index without scanning the table, shard by
//     shard with a per-shard budget, starting at a shard that rotates
//     every minute, so one busy shard cannot starve the others.
//   - Missed events, from each provider's source (Source, which the
//     provider's package builds: provider.Provider.Reconciler), each with
//     a checkpoint of its own and run whatever the others did. A
//     provider.Lister (Stripe's /v1/events, only the types the business
//     handles; GitHub's hook deliveries; Shopify's paid orders) is read
//     about a page at a time
//     since its checkpoint, oldest first; each event is claimed and
//     enqueued through the receiver's own path (package intake), so an
//     event that never arrived as a webhook is processed, and one that did
//     is a duplicate the inbox refuses. The checkpoint, kept in the inbox
//     table, is saved after every page and advances only past events
//     handled. An event that fails in 3 runs while later events are
//     accepted is recorded (a "skipped#<key>" item beside the
//     checkpoint), logged and counted, and the checkpoint moves past it.
//     A provider.Sweeper (GoPay's) fetches again, a budget a run, the objects
//     last seen in a state that is not final, and hands each one that
//     changed to the intake as its notification would.
//
// Each run records its metrics (internal/platform/metrics: StuckClaims, which the
// stuck-claims alarm watches, Reconciled, OverdueLeases, ReconcileErrors,
// and per source Missed, Reconciled, Skipped, ReconcileErrors and
// CheckpointLag) as CloudWatch embedded-metric-format lines. Error text
// is scrubbed of email addresses before it is recorded. Re-enqueueing is at least once; the processor's lease and effect ledger
// make a second message harmless. A Handler is safe for concurrent use,
// and two runs at once do no harm beyond duplicate messages.
package reconcile

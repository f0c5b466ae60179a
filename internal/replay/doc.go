// Package replay sends parked or finished events back to the processor:
// the whole DLQ or a filtered part of it, or events named by key, with a
// dry run that only reports. It is what the dlq-replay Lambda (the
// console's Test button), `hookinbox replay` and docs/operations.md use.
//
// Guarantees:
//
//   - Before an event's message is sent, its claim is put back to FAILED
//     with one conditional write (inbox.Store.Requeue: the last error
//     kept, the failure counts started afresh), so the processor takes it
//     with all its tries; an event under a live lease is left alone.
//   - A DLQ message is deleted only after its copy was sent to the events
//     queue, when its event is already DONE, or when it is an older copy
//     of an event the run has sent again (dropped, and reported). An event
//     parked again after the run sent it, because it failed again, keeps
//     its new message and reason: it is reported, not replayed again in
//     the same run.
//   - Nothing is lost: a message that is not an envelope, whose event has
//     no claim or payload any more, or that failed is left in the DLQ and
//     reported, visible again at the end of the run.
//   - A dry run writes nothing, sends nothing and deletes nothing.
//
// Replay is at least once: a message replayed twice is processed once,
// because the processor leases the claim and the effect ledger keeps
// finished effects from repeating. A Handler is safe for concurrent use,
// though two replays of one DLQ at once each see only part of it.
package replay

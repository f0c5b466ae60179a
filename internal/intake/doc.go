// Package intake is the one way a verified event enters hookinbox: claim
// it in the inbox, store its payload, send its envelope to the events
// queue. The webhook receiver uses it for deliveries and the reconciler
// for events it fetched from the provider's API, so there is one
// implementation of the claim (it comes before the message and never
// orphans an event) and neither imports the other.
//
// Guarantees:
//   - A new event costs two sequential round trips: the claim (a
//     conditional PutItem) and the payload write run together, then the
//     envelope is sent. No message is sent before its claim and its
//     payload are both stored.
//   - A claim never outlives a failed intake without a way back to its
//     payload: when the payload write or the send fails the claim is
//     released (the caller answers 5xx and the provider retries); if the
//     release fails too, or the function dies in between, every later
//     delivery of the event stores the payload again while the event is
//     unfinished (a body kept in S3 too: the same bytes under the same
//     name), and is answered only once it is stored; the reconciler's
//     listing does the same, and the claim is re-enqueued once its grace
//     period has passed.
//   - A duplicate is answered Duplicate without a second message, unless
//     its claim has sat in RECEIVED longer than the grace period (a crash
//     between claim and send), in which case it is re-enqueued, once per
//     grace period.
//
// An Intake is safe for concurrent use.
package intake

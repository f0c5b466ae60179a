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
//   - A claim, once won, is never deleted, so no fault loses its event:
//     when the payload write or the send fails the claim is kept,
//     marked unsent, and the caller answers 5xx. A delivery that raced
//     it and was answered 200 (the provider's retry of this very
//     delivery) had stored the payload first. Every later delivery
//     stores the payload again while the event is unfinished (a body
//     kept in S3 too: the same bytes under the same name), is answered
//     only once it is stored, and sends an unsent claim at once; the
//     reconciler's next run sends it too. A function that dies before
//     the mark leaves a claim sent on after its grace period.
//   - A duplicate is answered Duplicate without a second message, unless
//     its claim has sat in RECEIVED longer than the grace period (a crash
//     between claim and send), in which case it is re-enqueued, once per
//     grace period.
//
// An Intake is safe for concurrent use.
package intake

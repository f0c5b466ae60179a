// Package webhook is hookinbox's shared vocabulary: the verified Event,
// its Key in the inbox, the Request a provider's verifier reads, and the
// error kinds every part maps to an HTTP status, a retry or the
// dead-letter queue. A business (or a destination) returns Permanent for
// what no retry can fix, ErrNoHandler for a type it does not handle,
// ErrBusy when it tried nothing and the event should come back soon, and
// RetryAfter when the other side asked for a pause.
//
// It imports nothing of hookinbox's own, so every other package may import
// it. All types are plain values and safe for concurrent use. Within v0.x
// a minor release may change it, and the CHANGELOG says how.
package webhook

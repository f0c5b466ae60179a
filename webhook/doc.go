// Package webhook is hookinbox's shared vocabulary: the verified Event, its
// Key in the inbox, the Envelope that travels through SQS, and the error
// kinds that every adapter maps to HTTP statuses, retries or the DLQ.
//
// It imports nothing of hookinbox's own, so every other package may import
// it. All types are plain values and safe for concurrent use.
//
// It is part of hookinbox's public API for business code, with effects,
// stripeevent and processorfn: code in another module imports it to
// handle events. Within v0.x a minor release may change it, and the
// CHANGELOG says how.
package webhook

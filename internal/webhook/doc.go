// Package webhook is hookinbox's shared vocabulary: the verified Event, its
// Key in the inbox, the Envelope that travels through SQS, and the error
// kinds that every adapter maps to HTTP statuses, retries or the DLQ.
//
// It imports nothing of hookinbox's own, so every other package may import
// it. All types are plain values and safe for concurrent use.
package webhook

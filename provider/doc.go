// Package provider is hookinbox's contract with a webhook provider: what
// the receiver, processor, reconciler, `hookinbox send`, chaos and
// hookinboxtest need to know about one (Provider). Each provider hookinbox
// ships is a package below this one (provider/stripe, provider/github,
// ...) and a line in provider/builtin; a team adds its own by implementing
// Provider in its own module and handing it to its functions.
//
// A verifier turns a request (headers, query, the exact raw body) into the
// webhook.Events it carries, or into an error wrapping ErrNoSignature,
// ErrBadSignature, ... (each wraps a webhook error kind).
//
// Guarantees, for every provider:
//
//   - Nothing is parsed before it is verified. The signature is checked over
//     the raw bytes as received; the body is decoded only after it matched,
//     so an unsigned garbage body is unauthenticated (401), never
//     malformed (400).
//   - HMAC signatures are compared in constant time with hmac.Equal;
//     ed25519 signatures (Standard Webhooks v1a) are checked with
//     crypto/ed25519 under public keys, which hold nothing secret.
//   - An event carries the signed body byte for byte, or, where the body
//     wraps it (a GitHub hook with the form content type), the JSON it
//     wraps, so what is stored and processed is the same either way.
//   - Several secrets are accepted at once, so a secret can be rotated
//     without dropping deliveries, and a header may carry several
//     signatures (Stripe sends one per active secret while rolling).
//   - Where the scheme signs a timestamp (Stripe, Standard Webhooks), it
//     must be within a tolerance of now, in the past and in the future,
//     and "now" comes from an injected clock. Adyen signs fields, not
//     bytes: its body is decoded first, but nothing is returned unless
//     every item's signature matches. GoPay signs nothing: its verifier
//     only validates the payment id, and the processor fetches the state.
//   - Errors carry context a person can act on (which check failed, how old
//     the timestamp was) but never a secret, a signature or payload content.
//   - Verifiers hold no mutable state and are safe for concurrent use.
//
// It is part of hookinbox's public API; within v0.x a minor release may
// change it, and the CHANGELOG says how.
package provider

// Package provider is the runtime contract between hookinbox's functions
// and a webhook provider: what a deployed receiver, processor and
// reconciler need of one (Provider), and the registry they iterate
// (Registry). Each provider hookinbox ships implements it on the public
// packages alone, as a team's provider does in its own module, handed to
// its functions' mains. How tools sign and sample
// test deliveries is another contract, provider/sample.
//
// A Provider is its Name; its Webhook, how it delivers, whose optional
// Subjects and PrivacyRequest say whom an event names and which events
// ask for an erasure; its Verifier; its Fetch (Processor), every part
// optional; and its reconcile Source (Reconciler), a Lister or a Sweeper
// that may ask the reconciler's Inbox (Env.Inbox). A fetch may fail with
// a NotFoundError. Nothing else is found by a type assertion.
//
// Guarantees, for every provider: nothing is parsed before it is
// verified over the raw bytes, in constant time (hmac.Equal, or ed25519
// for Standard Webhooks v1a), so an unsigned body is unauthenticated
// (401), never malformed (400); several secrets are accepted at once, so
// one rotates without a lost delivery; a signed timestamp is checked
// against an injected clock; an event carries the signed body byte for
// byte; errors wrap ErrNoSignature, ErrBadSignature, ... and never carry
// a secret, a signature or payload content; providers and verifiers hold
// no mutable state and are safe for concurrent use.
package provider

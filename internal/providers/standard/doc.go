// Package standard is hookinbox's Standard Webhooks provider, and the
// scheme hookinbox's destinations sign with: messages verified in
// webhook-signature, v1 (HMAC under whsec_ secrets) or v1a (ed25519 under
// whpk_ keys), within a tolerance of the signed timestamp, keyed
// standard#<webhook-id>. Verifier checks what a destination sends;
// SignedHeaders signs it. Sender is its test deliveries, for tools. Safe
// for concurrent use.
package standard

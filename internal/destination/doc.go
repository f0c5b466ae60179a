// Package destination delivers each verified event to the destinations
// a deployment configures, with no Go to write: HTTP endpoints, signed per
// Standard Webhooks, and EventBridge buses.
//
// Configuration (Config, Parse) is a list of destinations, each with the
// events it gets as "provider:type" patterns. Every destination receives
// the same JSON (Body): the event's id for this destination, provider,
// type, key, received time and the provider's payload. Over HTTP it is
// POSTed with the headers webhook-id (WebhookID: the same on every
// delivery of the event to the destination), webhook-timestamp and
// webhook-signature (one v1 HMAC per secret, so a rotation signs with
// both), and optionally one static header from a secret. Redirects are
// not followed; only https:// URLs are accepted, plain http:// only to a
// loopback host.
//
// Guarantees: each destination is its own effect in the effect ledger
// (EffectName), so a destination that fails never makes another one, or
// the team's Go business, run again; an event is delivered to a
// destination at least once, with the same webhook-id on every delivery.
// Safe for concurrent use.
package destination

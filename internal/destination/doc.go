// Package destination delivers each verified event, with no Go to write,
// to the HTTP endpoints (signed per Standard Webhooks) and EventBridge
// buses a deployment configures (Config, Parse; docs/destinations.md).
//
// Every destination gets the same JSON (Body): the event's id for this
// destination (WebhookID, the same on every delivery), provider, type,
// key, received time and the provider's payload byte for byte (spliced
// in, signed and sent in parts, never re-encoded or copied). Over HTTP:
// one v1 signature per secret, https:// to another machine only
// (ownMachine), no redirects. An EventBridge entry over MaxEntrySize is
// parked, never cut.
//
// Answers (classify): 2xx delivered; 408, 429, 5xx, a timeout or no
// connection retried, no sooner than a Retry-After asks (up to the
// processor's longest backoff); other answers park, 410 as ErrGone. One
// part's permanent failure parks the event only once the business and
// every other destination are done (Combine). A destination takes at
// most Config.Concurrency deliveries at once per instance; one that finds
// no free slot is not tried (webhook.ErrBusy).
//
// Guarantees: each destination is its own effect in the effect ledger
// (effectName), so a failing one never makes another, or the business,
// run again; each event reaches each destination at least once, under
// one webhook-id. Safe for concurrent use.
package destination

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
// not followed; only https:// URLs to another machine are accepted, and
// nothing of its own machine is connected to (ownMachine); the local
// stack's rules allow this machine, plain http:// too.
//
// Body size: the provider's payload, byte for byte when it is JSON (its
// verified bytes are spliced into the envelope, never re-encoded, and the
// body is signed and sent in parts, never copied), plus under 1 KiB. hookinbox keeps payloads up to what Lambda receives (about
// 6 MB), so an HTTP destination may get that much. An EventBridge entry
// holds at most MaxEntrySize (256 KiB); a bigger event is parked
// (ErrTooLarge), never cut.
//
// Answers (classify): 2xx is delivered; 408, 429, 5xx, a timeout
// (defaultTimeout) and no connection are retried with the processor's
// backoff, no sooner than a Retry-After asks up to the processor's
// longest backoff (15 minutes; a longer wait is cut to it, and the try
// counts), and parked when the event's tries run out; other answers (3xx,
// 4xx) park the event, 410 as ErrGone, which alarms. An answer's text is
// kept cut to MaxAnswerText.
//
// One part's failure costs no other part its turn (Combine): a permanent
// failure parks the event only once the business and every other
// destination are done or out of their tries; until then the event comes
// back for them, and the refusing destination is asked again with it.
//
// Concurrency: each destination takes at most Config.Concurrency
// deliveries at once in one processor instance. A delivery that finds no
// free slot is not tried (webhook.ErrBusy) and the processor brings the event back
// soon without counting the attempt; the business and the other
// destinations of the event run meanwhile. Lambda runs one batch per
// instance, and the events queue's MaximumConcurrency bounds the
// instances, so a destination gets at most that many times its
// Concurrency at once.
//
// Guarantees: each destination is its own effect in the effect ledger
// (effectName), so a destination that fails never makes another one, or
// the team's Go business, run again; an event is delivered to a
// destination at least once, with the same webhook-id on every delivery.
// Safe for concurrent use.
package destination

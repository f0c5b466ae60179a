// Package shop is the example business behind hookinbox: what a user
// replaces with their own effects. It reacts to Stripe events:
//
//   - checkout.session.completed (once paid; for a delayed payment method
//     checkout.session.async_payment_succeeded) grants access, sends a
//     welcome email through SES and creates a Stripe invoice. A guest
//     checkout (no customer) is fulfilled for the email address given at
//     checkout, without an invoice: a Stripe invoice needs a customer.
//   - customer.subscription.created, .updated and .deleted keep a
//     subscription record and the access it gives, as read from Stripe's
//     API (see subscriptionChanged for why the event's own copy is not
//     enough).
//
// Access is kept per source: each one-time purchase and each subscription
// has an entitlement of its own, and a holder (a customer, or a guest's
// email address) has access while any of them is active (State.Access).
// Ending one subscription never takes away what another one, or a
// purchase, gave. A new source of access (another provider's order, say)
// is one more kind of entitlement item under the same holder.
//
// Every event is dispatched by its provider and type (processorfn.Mux)
// before its payload is read, so a type the shop does not handle is
// IGNORED whatever its body holds; and every decision is taken from the
// signed body, never from a header the signature does not cover (Shopify's
// topic and event id route an event, nothing more).
//
// Every effect runs through an effects.Runner, so a retry after a partial
// failure repeats only what did not finish, and every effect is idempotent at
// its own level: records are written "only if newer" (effects.PutIfNewer)
// or once per business object (effects.PutOnce), and calls to Stripe
// carry an idempotency key. A checkout's email and invoice are keyed by
// its Checkout Session, not the event, so a thin event and the snapshot
// event of one checkout, claimed under two keys, send and create them
// once. An invoice is also looked up by the session's key in its metadata
// before it is created, since Stripe forgets idempotency keys after 24
// hours and a replay can come later than that.
//
// Purchases, emails and invoices are a pure function of the set of
// checkouts handled, whatever their order and however often each was
// delivered. Subscriptions are Stripe's state as last read: their version
// is the time the read started, and any read started after the last change
// gives the current status.
//
// The welcome email is the one effect whose outside system takes no
// idempotency key (SES), so it runs at most once (effects.AtMostOnce): the
// ledger records that an attempt is sending it before the call, and the
// outcome after it, with retries. An attempt that cannot tell whether the
// email went out (a timeout or a lost connection mid-call, or an earlier
// attempt that started it and recorded nothing) parks the event with
// effects.ErrOutcomeUnknown instead of sending it again; a person resolves
// it (docs/operations.md). The idempotency key travels in the email's
// tags so the email can be found.
//
// The package logs nothing; it reports through returned errors, classified
// with webhook.Permanent (retrying cannot help) and webhook.ErrNoHandler.
// A Shop is safe for concurrent use.
package shop

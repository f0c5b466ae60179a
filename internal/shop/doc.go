// Package shop is the example business behind hookinbox: what a user
// replaces with their own effects. It reacts to Stripe events:
//
//   - checkout.session.completed grants the customer access, sends a welcome
//     email through SES and creates a Stripe invoice;
//   - customer.subscription.created, .updated and .deleted keep a
//     subscription record and make the customer's access follow it.
//
// Every effect runs through an effects.Runner, so a retry after a partial
// failure repeats only what did not finish, and every effect is idempotent at
// its own level: records are written "only if newer" with the event's
// version (effects.PutIfNewer) or once per event (effects.PutOnce), and calls
// to Stripe carry an idempotency key. The business records are a pure
// function of the set of events handled, whatever their order and however
// often each was delivered: they hold no wall-clock times, random IDs or
// attempt counts.
//
// The one effect that can repeat is the welcome email: SES takes no
// idempotency key, so if the process dies between a successful SendEmail and
// the ledger record, the retry sends the email again (at least once). The
// idempotency key travels in the email's tags so duplicates can be found.
//
// The package logs nothing; it reports through returned errors, classified
// with webhook.Permanent (retrying cannot help) and webhook.ErrNoHandler.
// A Shop is safe for concurrent use.
package shop

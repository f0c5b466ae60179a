// Package stripe is hookinbox's Stripe provider: snapshot events and thin
// event notifications verified in Stripe-Signature, keyed stripe#<event
// id> (a thin notification under its snapshot twin's id when it names
// one); a lost payload or a thin event fetched from Stripe's API; the
// event list as the reconciler's source; ParseEvent for events that come
// authenticated another way (an EventBridge destination). A business
// calls Stripe with the processor's own key (KeyFromContext). Sender is
// its test deliveries, for tools. Safe for concurrent use.
package stripe

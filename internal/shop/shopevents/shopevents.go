// Package shopevents names the Stripe event types the example shop acts
// on. It imports nothing, so the reconciler lists exactly those types from
// Stripe's API without linking the shop itself (its SES, billing and
// effect code); the shop's Handle answers every other type with
// webhook.ErrNoHandler.
package shopevents

// Stripe event types the shop handles.
const (
	CheckoutCompleted   = "checkout.session.completed"
	CheckoutAsyncPaid   = "checkout.session.async_payment_succeeded"
	SubscriptionCreated = "customer.subscription.created"
	SubscriptionUpdated = "customer.subscription.updated"
	SubscriptionDeleted = "customer.subscription.deleted"
)

// Types returns the Stripe event types the shop acts on, for the webhook
// endpoint's enabled events and the reconciler's event list.
func Types() []string {
	return []string{CheckoutCompleted, CheckoutAsyncPaid, SubscriptionCreated, SubscriptionUpdated, SubscriptionDeleted}
}

// Package shopevents names the Stripe event types the example shop
// handles. It imports nothing; the template's StripeEventTypes default
// lists the same types.
package shopevents

// Stripe event types the shop handles.
const (
	CheckoutCompleted   = "checkout.session.completed"
	CheckoutAsyncPaid   = "checkout.session.async_payment_succeeded"
	SubscriptionCreated = "customer.subscription.created"
	SubscriptionUpdated = "customer.subscription.updated"
	SubscriptionDeleted = "customer.subscription.deleted"
)

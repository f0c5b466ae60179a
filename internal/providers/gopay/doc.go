// Package gopay is hookinbox's GoPay provider: unsigned notifications
// that carry a payment id (GET ?id=), keyed gopay#<id> and typed
// Notification; the payment fetched from GoPay's API on every attempt,
// its state the only thing trusted; payments not final yet watched and
// fetched again by the reconciler until they are. Sender is its test
// deliveries, for tools. Safe for concurrent use.
package gopay

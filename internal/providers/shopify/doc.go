// Package shopify is hookinbox's Shopify provider: webhooks verified in
// X-Shopify-Hmac-Sha256 (with or without X- on the header names), keyed
// shopify#<event id>, a paid order's orders/paid by the order; the
// mandatory compliance topics as privacy requests, acted on only when the
// signed body is of its topic's shape; the shop's paid orders as the
// reconciler's source. Sender is its test deliveries, for tools. Safe
// for concurrent use.
package shopify

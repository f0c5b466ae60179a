// Package adyen is hookinbox's Adyen provider: standard notifications
// whose every item is verified in its additionalData.hmacSignature
// before anything is returned, one event per item, keyed
// adyen#<pspReference>-<eventCode>, answered "[accepted]"; the mode the
// deployment runs in, Adyen's own. Sender is its test deliveries, for
// tools. Safe for concurrent use.
package adyen

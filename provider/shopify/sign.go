package shopify

import (
	"encoding/base64"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
)

// Headers returns the headers Shopify sends with body: the topic, the
// event id, a webhook id derived from it, the trigger time and
// X-Shopify-Hmac-Sha256 (the base64 HMAC of the body) under secret.
func Headers(body []byte, secret, eventID, topic string, at time.Time) map[string]string {
	return map[string]string{
		"content-type":           "application/json",
		"x-shopify-topic":        topic,
		"x-shopify-event-id":     eventID,
		"x-shopify-webhook-id":   "wh-" + eventID,
		"x-shopify-triggered-at": at.UTC().Format(time.RFC3339Nano),
		"x-shopify-shop-domain":  "hookinbox-demo.myshopify.com",
		"x-shopify-api-version":  "2025-01",
		"x-shopify-hmac-sha256":  base64.StdEncoding.EncodeToString(provider.HMACSHA256([]byte(secret), body)),
	}
}

// Unprefixed returns headers (Headers') with every X-Shopify- name
// without its X- (Shopify-Hmac-Sha256, Shopify-Topic, ...), as Shopify's
// newer deliveries send them.
func Unprefixed(headers map[string]string) map[string]string {
	out := make(map[string]string, len(headers))
	for k, v := range headers {
		out[strings.TrimPrefix(k, "x-")] = v
	}
	return out
}

package shopify

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
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

// freshOrder returns the order webhook body with a fresh order ID (every
// occurrence of the old one): a new order.
func freshOrder(body []byte) ([]byte, error) {
	var order struct {
		ID json.Number `json:"id"`
	}
	if err := json.Unmarshal(body, &order); err != nil || order.ID == "" {
		return nil, fmt.Errorf("shopify: fresh order ID: not an order with an id: %v", err)
	}
	var n [8]byte
	_, _ = rand.Read(n[:])
	id := 1_000_000_000_000 + int64(binary.BigEndian.Uint64(n[:])%9_000_000_000_000) // 13 digits, as Shopify's
	return bytes.ReplaceAll(body, []byte(order.ID.String()), []byte(strconv.FormatInt(id, 10))), nil
}

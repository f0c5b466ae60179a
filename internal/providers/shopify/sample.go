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
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sender is how tools send Shopify's test deliveries: a webhook signed in
// X-Shopify-Hmac-Sha256, its headers named with X- or (variant
// "unprefixed") without.
func Sender() sample.Sender {
	return sample.Sender{Provider: Provider{}, Sign: sign, Sample: sampleEvent, Help: sendHelp, Examples: sendExamples,
		Variants: []sample.Flag{{Name: "unprefixed", Usage: "shopify: name the headers without X- (Shopify-Hmac-Sha256, ...)"}}}
}

// sign is Shopify's Sign: ev.Body under the first secret, the
// topic ev.Type or the file's name with / for its first _ (orders_paid:
// orders/paid), a fresh event id unless ev.ID; variant "unprefixed" names
// the headers without X-.
func sign(ev sample.Event, secrets []string, at time.Time) (webhook.Request, error) {
	secret, err := sample.FirstSecret(Name, secrets)
	if err != nil {
		return webhook.Request{}, err
	}
	topic := topic(ev)
	if topic == "" {
		return webhook.Request{}, fmt.Errorf("shopify: no topic")
	}
	id := ev.ID
	if id == "" {
		id = sample.UUID()
	}
	h := Headers(ev.Body, secret, id, topic, at)
	if ev.Variant == "unprefixed" {
		h = Unprefixed(h)
	}
	return webhook.Request{Method: "POST", Header: h, Body: ev.Body}, nil
}

// sampleEvent is Shopify's Sample: the event id ev.ID or a fresh
// one, the topic ev.Type or the file's name (orders_paid: orders/paid),
// and, when ev.Fresh, a fresh order ID. A paid order's orders/paid is
// keyed by the order, whatever its event id: its ID is order-<id>-paid.
func sampleEvent(ev sample.Event) (sample.Event, error) {
	if ev.Type = topic(ev); ev.Type == "" {
		return ev, fmt.Errorf("shopify: no topic")
	}
	if ev.ID == "" {
		ev.ID = sample.UUID()
	}
	if ev.Fresh {
		var order struct {
			ID json.Number `json:"id"`
		}
		if err := json.Unmarshal(ev.Body, &order); err != nil || order.ID == "" {
			return ev, fmt.Errorf("shopify: fresh order ID: not an order with an id: %v", err)
		}
		var n [8]byte
		_, _ = rand.Read(n[:])
		id := 1_000_000_000_000 + int64(binary.BigEndian.Uint64(n[:])%9_000_000_000_000) // 13 digits, as Shopify's
		ev.Body = bytes.ReplaceAll(ev.Body, []byte(order.ID.String()), []byte(strconv.FormatInt(id, 10)))
	}
	if paid := paidOrderID(ev.Type, ev.Body); paid != "" {
		ev.ID = paid
	}
	return ev, nil
}

// topic is ev's topic: ev.Type, or the file's name with / for its first _.
func topic(ev sample.Event) string {
	if ev.Type != "" {
		return ev.Type
	}
	return strings.Replace(strings.TrimSuffix(ev.File, ".json"), "_", "/", 1)
}

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

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `X-Shopify-Hmac-Sha256 (base64 HMAC of the body); the topic is
--type or the file's name with _ for / (orders_paid: orders/paid);
a payload name gets a fresh order ID; a fresh X-Shopify-Event-Id
unless --id; --unprefixed names the headers without X-
(Shopify-Hmac-Sha256, ...), as Shopify's newer deliveries do`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send shopify orders/paid --times 2",
	"hookinbox send shopify my-order.json --type orders/paid",
}

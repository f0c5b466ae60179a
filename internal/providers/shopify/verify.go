package shopify

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Name is the Provider of every event Verifier.Verify returns.
const Name = "shopify"

// verifier verifies Shopify webhook deliveries: X-Shopify-Hmac-Sha256 is
// the base64 HMAC-SHA256 of the raw body under the app's client secret.
// The key is shopify#<X-Shopify-Event-Id> (Shopify's documented duplicate
// key: the same event delivered to several subscriptions, or redelivered,
// keeps it), falling back to X-Shopify-Webhook-Id; but an orders/paid
// whose signed body is a paid order is keyed by the order, as the
// reconciler claims the paid orders it lists: shopify#order-<id>-paid
// (paidOrderID). The type is X-Shopify-Topic ("orders/paid"), the
// occurrence time X-Shopify-Triggered-At, and the account
// X-Shopify-Shop-Domain. A compliance topic's body must be of that
// topic's shape (400 otherwise: the topic is not signed, and a body signed
// for another topic must not erase anything).
//
// Shopify's newer deliveries name the same headers without X-
// (Shopify-Hmac-Sha256, Shopify-Topic, Shopify-Event-Id, ...), and
// Shopify's own API libraries accept either spelling: each header is read
// as X-Shopify-<name>, or Shopify-<name> when that is absent. Safe for
// concurrent use.
type verifier struct {
	Secrets []string // accepted client secrets; several while rotating
}

// Verify implements the receiver's verifier: 401 before anything is
// parsed, then 400 for a missing id, topic or a body that is not a JSON
// object.
func (s *verifier) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	if err := provider.CheckSecrets(Name, s.Secrets); err != nil {
		return nil, err
	}
	header := shopifyHeader(r, "hmac-sha256")
	if header == "" {
		return nil, fmt.Errorf("shopify: no X-Shopify-Hmac-Sha256 (or Shopify-Hmac-Sha256) header: %w", provider.ErrNoSignature)
	}
	sig, err := base64.StdEncoding.DecodeString(header)
	if err != nil {
		return nil, fmt.Errorf("shopify: X-Shopify-Hmac-Sha256 is not base64: %w", provider.ErrBadSignature)
	}
	if !provider.BodySignedBy(sig, r.Body, s.Secrets) {
		return nil, fmt.Errorf("shopify: signature matches none of %d secrets: %w", len(s.Secrets), provider.ErrBadSignature)
	}
	id, what := shopifyHeader(r, "event-id"), "X-Shopify-Event-Id"
	if id == "" {
		id, what = shopifyHeader(r, "webhook-id"), "X-Shopify-Webhook-Id"
	}
	if err := provider.CheckEventID(Name, what, id); err != nil {
		return nil, err
	}
	topic := shopifyHeader(r, "topic")
	if topic == "" {
		return nil, fmt.Errorf("shopify: no X-Shopify-Topic: %w", provider.ErrNotEvent)
	}
	if err := provider.CheckJSONObject(Name, r.Body); err != nil {
		return nil, err
	}
	if !json.Valid(r.Body) {
		return nil, fmt.Errorf("shopify: body is not valid JSON: %w", provider.ErrNotJSON)
	}
	if isCompliance(topic) {
		// The topic is not signed: a compliance topic acts on its body
		// only when the body is of that topic's shape.
		if _, _, err := complianceBody(topic, r.Body); err != nil {
			return nil, fmt.Errorf("shopify: %w: %w", err, provider.ErrNotEvent)
		}
	}
	var at time.Time
	if t, err := time.Parse(time.RFC3339Nano, shopifyHeader(r, "triggered-at")); err == nil {
		at = t.UTC()
	}
	if paid := paidOrderID(topic, r.Body); paid != "" {
		id = paid
	}
	return []webhook.Event{{Provider: Name, ID: id, Type: topic, Created: at, Raw: r.Body, Account: shopifyHeader(r, "shop-domain")}}, nil
}

// paidOrderID returns the event id under which an orders/paid delivery
// and the reconciler's claim of the same paid order are one claim,
// order-<id>-paid, when topic is orders/paid and body an order with a
// positive integer id whose financial_status is paid; else "". The topic
// is not signed, so it decides only between two keys of a body that says
// itself that this order is paid: a captured body of an unpaid order sent
// as orders/paid keeps its event id, and cannot take the paid order's key.
func paidOrderID(topic string, body []byte) string {
	if topic != "orders/paid" {
		return ""
	}
	var o struct {
		ID              json.Number `json:"id"`
		FinancialStatus string      `json:"financial_status"`
	}
	if json.Unmarshal(body, &o) != nil || o.FinancialStatus != "paid" {
		return ""
	}
	if n, err := strconv.ParseUint(o.ID.String(), 10, 64); err != nil || n == 0 || strconv.FormatUint(n, 10) != o.ID.String() {
		return ""
	}
	return paidOrder(o.ID.String())
}

// paidOrder is the event id of the paid order id.
func paidOrder(id string) string { return "order-" + id + "-paid" }

// shopifyHeader returns x-shopify-<name>, or shopify-<name> when that is
// absent.
func shopifyHeader(r webhook.Request, name string) string {
	if v := strings.TrimSpace(r.Header["x-shopify-"+name]); v != "" {
		return v
	}
	return strings.TrimSpace(r.Header["shopify-"+name])
}

package verifytest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

func mac(key []byte, parts ...string) []byte {
	m := hmac.New(sha256.New, key)
	for _, p := range parts {
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

// SignStripe returns the Stripe-Signature header value Stripe sends with
// body signed at at: "t=<unix>,v1=<hex HMAC-SHA256 of "<unix>.<body>">",
// with one v1 per secret, in order, as Stripe does while a secret is being
// rolled. With no secret it returns "t=<unix>" alone.
func SignStripe(body []byte, at time.Time, secrets ...string) string {
	t := strconv.FormatInt(at.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + t)
	for _, secret := range secrets {
		b.WriteString(",v1=" + hex.EncodeToString(mac([]byte(secret), t+".", string(body))))
	}
	return b.String()
}

// GitHubHeaders returns the headers GitHub sends with body: the delivery
// id, the event name and X-Hub-Signature-256 ("sha256=<hex HMAC>") under
// secret. Names are lower case, as API Gateway gives them.
func GitHubHeaders(body []byte, secret, delivery, event string) map[string]string {
	return map[string]string{
		"content-type":        "application/json",
		"user-agent":          "GitHub-Hookshot/hookinbox",
		"x-github-delivery":   delivery,
		"x-github-event":      event,
		"x-hub-signature-256": "sha256=" + hex.EncodeToString(mac([]byte(secret), string(body))),
	}
}

// GitHubForm returns the body and headers GitHub sends for event when the
// hook's content type is application/x-www-form-urlencoded (the default of
// a hook created through GitHub's API): "payload=" and the URL-encoded
// JSON, signed as it is sent, over the form bytes.
func GitHubForm(event []byte, secret, delivery, name string) ([]byte, map[string]string) {
	body := []byte(url.Values{"payload": {string(event)}}.Encode())
	headers := GitHubHeaders(body, secret, delivery, name)
	headers["content-type"] = "application/x-www-form-urlencoded"
	return body, headers
}

// ShopifyHeaders returns the headers Shopify sends with body: the topic,
// the event id, a webhook id derived from it, the trigger time and
// X-Shopify-Hmac-Sha256 (the base64 HMAC of the body) under secret.
func ShopifyHeaders(body []byte, secret, eventID, topic string, at time.Time) map[string]string {
	return map[string]string{
		"content-type":           "application/json",
		"x-shopify-topic":        topic,
		"x-shopify-event-id":     eventID,
		"x-shopify-webhook-id":   "wh-" + eventID,
		"x-shopify-triggered-at": at.UTC().Format(time.RFC3339Nano),
		"x-shopify-shop-domain":  "hookinbox-demo.myshopify.com",
		"x-shopify-api-version":  "2025-01",
		"x-shopify-hmac-sha256":  base64.StdEncoding.EncodeToString(mac([]byte(secret), string(body))),
	}
}

// ShopifyUnprefixed returns headers (ShopifyHeaders') with every
// X-Shopify- name without its X- (Shopify-Hmac-Sha256, Shopify-Topic,
// ...), as Shopify's newer deliveries send them.
func ShopifyUnprefixed(headers map[string]string) map[string]string {
	out := make(map[string]string, len(headers))
	for k, v := range headers {
		out[strings.TrimPrefix(k, "x-")] = v
	}
	return out
}

// StandardHeaders returns the Standard Webhooks headers for body sent as
// message id at at, with one signature of "<id>.<unix>.<body>" per secret,
// space-separated, as a sender does while rotating: "v1,<base64 HMAC>"
// for a "whsec_<base64>" secret, "v1a,<base64 ed25519 signature>" for a
// "whsk_<base64>" private key (its 32-byte seed, or the 64-byte key).
// A "whpk_" public key verifies but cannot sign: it is skipped, so a
// receiver's own list of secrets signs what it accepts. It panics on a
// secret that is not base64: a test's own mistake.
func StandardHeaders(body []byte, id string, at time.Time, secrets ...string) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	signed := id + "." + ts + "." + string(body)
	var sigs []string
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "whpk_") {
			continue
		}
		if seed, ok := strings.CutPrefix(s, "whsk_"); ok {
			sigs = append(sigs, "v1a,"+base64.StdEncoding.EncodeToString(ed25519.Sign(StandardPrivateKey(seed), []byte(signed))))
			continue
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			panic(fmt.Sprintf("verifytest: standard secret is not base64: %v", err))
		}
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac(key, signed)))
	}
	return map[string]string{
		"content-type":      "application/json",
		"webhook-id":        id,
		"webhook-timestamp": ts,
		"webhook-signature": strings.Join(sigs, " "),
	}
}

// StandardPrivateKey returns the ed25519 private key of a Standard
// Webhooks "whsk_<base64>" signing key (the prefix may be left off): a
// 32-byte seed, as the specification's reference libraries hold it, or
// the 64-byte private key. It panics on anything else.
func StandardPrivateKey(whsk string) ed25519.PrivateKey {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(whsk, "whsk_"))
	switch {
	case err == nil && len(k) == ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(k)
	case err == nil && len(k) == ed25519.PrivateKeySize:
		return ed25519.PrivateKey(k)
	}
	panic(fmt.Sprintf("verifytest: whsk_ key is not a base64 %d-byte seed or %d-byte key", ed25519.SeedSize, ed25519.PrivateKeySize))
}

// StandardPublicKey returns the "whpk_<base64>" public key of a "whsk_"
// signing key, the secret a receiver verifies its v1a signatures with.
func StandardPublicKey(whsk string) string {
	pub := StandardPrivateKey(whsk).Public().(ed25519.PublicKey)
	return "whpk_" + base64.StdEncoding.EncodeToString(pub)
}

// AdyenItem is one notification item to build: the fields Adyen signs,
// plus the event date.
type AdyenItem struct {
	PspReference, OriginalReference, MerchantAccount, MerchantReference string
	Value                                                               int64
	Currency, EventCode                                                 string
	Success                                                             bool
	EventDate                                                           time.Time
}

// AdyenNotification returns a standard notification carrying items, each
// signed in additionalData.hmacSignature under the hex HMAC key, shaped as
// Adyen sends it. It panics on a key that is not hex.
func AdyenNotification(hexKey string, items ...AdyenItem) []byte {
	key, err := hex.DecodeString(hexKey)
	if err != nil {
		panic(fmt.Sprintf("verifytest: adyen key is not hex: %v", err))
	}
	wrapped := make([]object, len(items))
	for i, it := range items {
		success := strconv.FormatBool(it.Success)
		value := strconv.FormatInt(it.Value, 10)
		sig := mac(key, strings.Join([]string{it.PspReference, it.OriginalReference, it.MerchantAccount,
			it.MerchantReference, value, it.Currency, it.EventCode, success}, ":"))
		item := object{
			{"additionalData", object{
				{"authCode", "058950"},
				{"cardSummary", "1111"},
				{"expiryDate", "03/2030"},
				{"hmacSignature", base64.StdEncoding.EncodeToString(sig)},
			}},
			{"amount", object{{"currency", it.Currency}, {"value", it.Value}}},
			{"eventCode", it.EventCode},
			{"eventDate", it.EventDate.UTC().Format(time.RFC3339)},
			{"merchantAccountCode", it.MerchantAccount},
			{"merchantReference", it.MerchantReference},
			{"operations", []string{"CANCEL", "CAPTURE", "REFUND"}},
			{"paymentMethod", "visa"},
			{"pspReference", it.PspReference},
			{"reason", "058950:1111:03/2030"},
			{"success", success},
		}
		if it.OriginalReference != "" {
			item = append(item, field{"originalReference", it.OriginalReference})
		}
		wrapped[i] = object{{"NotificationRequestItem", item}}
	}
	b, err := encode(object{{"live", "false"}, {"notificationItems", wrapped}})
	if err != nil {
		panic(fmt.Sprintf("verifytest: encode notification: %v", err)) // only strings, numbers and bools: cannot fail
	}
	return b
}

// SignAdyenFile re-signs every item of a standard notification read from a
// file (testdata/adyen/...), keeping its bytes otherwise, so a realistic
// payload can be sent with the local key. It fails on a body that is not a
// notification.
func SignAdyenFile(body []byte, hexKey string) ([]byte, error) {
	key, err := hex.DecodeString(hexKey)
	if err != nil {
		return nil, fmt.Errorf("adyen key is not hex: %w", err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("not a notification: %w", err)
	}
	items, _ := doc["notificationItems"].([]any)
	if len(items) == 0 {
		return nil, fmt.Errorf("not a notification: no notificationItems")
	}
	for i, w := range items {
		m, _ := w.(map[string]any)
		it, _ := m["NotificationRequestItem"].(map[string]any)
		if it == nil {
			return nil, fmt.Errorf("item %d has no NotificationRequestItem", i)
		}
		str := func(k string) string { s, _ := it[k].(string); return s }
		amount, _ := it["amount"].(map[string]any)
		value := ""
		if n, ok := amount["value"].(json.Number); ok {
			value = n.String()
		}
		currency, _ := amount["currency"].(string)
		sig := mac(key, strings.Join([]string{str("pspReference"), str("originalReference"), str("merchantAccountCode"),
			str("merchantReference"), value, currency, str("eventCode"), str("success")}, ":"))
		ad, _ := it["additionalData"].(map[string]any)
		if ad == nil {
			ad = map[string]any{}
			it["additionalData"] = ad
		}
		ad["hmacSignature"] = base64.StdEncoding.EncodeToString(sig)
	}
	return json.MarshalIndent(doc, "", "  ")
}

// object is a JSON object that keeps its keys in the order given, as the
// providers' payloads do.
type object []field

type field struct {
	key   string
	value any
}

// MarshalJSON writes the fields in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(f.key)
		if err != nil {
			return nil, err
		}
		v, err := encode(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

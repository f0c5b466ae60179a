package adyen

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sender is how tools send Adyen's test deliveries: a notification whose
// every item is signed again in its additionalData.hmacSignature.
func Sender() sample.Sender {
	return sample.Sender{Provider: Provider{}, Sign: sign, Sample: sampleEvent, Help: sendHelp, Examples: sendExamples}
}

// sign is Adyen's Sign: every item of the notification
// ev.Body signed again under the first hex key.
func sign(ev sample.Event, secrets []string, _ time.Time) (webhook.Request, error) {
	key, err := sample.FirstSecret(Name, secrets)
	if err != nil {
		return webhook.Request{}, err
	}
	body, err := signFile(ev.Body, key)
	if err != nil {
		return webhook.Request{}, err
	}
	return webhook.Request{Method: "POST", Header: map[string]string{"content-type": "application/json"}, Body: body}, nil
}

// sampleEvent is Adyen's Sample: a notification of one item, keyed
// "<pspReference>-<eventCode>" with type eventCode; when ev.Fresh, with
// a fresh pspReference.
func sampleEvent(ev sample.Event) (sample.Event, error) {
	var n struct {
		Items []struct {
			Item struct{ PspReference, EventCode string } `json:"NotificationRequestItem"`
		} `json:"notificationItems"`
	}
	if err := json.Unmarshal(ev.Body, &n); err != nil || len(n.Items) != 1 || n.Items[0].Item.PspReference == "" {
		return ev, errors.New("adyen: not a notification of one item with a pspReference")
	}
	it := n.Items[0].Item
	if ev.Fresh {
		psp := sample.Digits(16)
		ev.Body = sample.ReplaceString(ev.Body, it.PspReference, psp)
		it.PspReference = psp
	}
	ev.ID, ev.Type = it.PspReference+"-"+it.EventCode, it.EventCode
	return ev, nil
}

// Signature returns the additionalData.hmacSignature of it under the hex
// HMAC key: the base64 HMAC-SHA256 of its signing string.
func Signature(hexKey string, it Item) (string, error) {
	key, err := hex.DecodeString(hexKey)
	if err != nil {
		return "", fmt.Errorf("adyen: the HMAC key is not hex")
	}
	return base64.StdEncoding.EncodeToString(provider.HMACSHA256(key, []byte(it.SigningString()))), nil
}

// signFile signs every item of a standard notification (a file of
// testdata/adyen/, say) again under the hex HMAC key, keeping its content
// otherwise, so a realistic payload can be sent with any key. It fails on
// a body that is not a notification.
func signFile(body []byte, hexKey string) ([]byte, error) {
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
		item := Item{PspReference: str("pspReference"), OriginalReference: str("originalReference"),
			MerchantAccountCode: str("merchantAccountCode"), MerchantReference: str("merchantReference"),
			EventCode: str("eventCode"), Success: str("success")}
		item.Amount.Value, item.Amount.Currency = json.Number(value), currency
		sig, err := Signature(hexKey, item)
		if err != nil {
			return nil, err
		}
		ad, _ := it["additionalData"].(map[string]any)
		if ad == nil {
			ad = map[string]any{}
			it["additionalData"] = ad
		}
		ad["hmacSignature"] = sig
	}
	return json.MarshalIndent(doc, "", "  ")
}

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `every notification item's additionalData.hmacSignature
(base64 HMAC of Adyen's field order under the hex key)`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send adyen testdata/adyen/AUTHORISATION.json",
}

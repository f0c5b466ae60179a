package adyen

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/hookinbox/hookinbox/provider"
)

// Signature returns the additionalData.hmacSignature of it under the hex
// HMAC key: the base64 HMAC-SHA256 of its signing string.
func Signature(hexKey string, it Item) (string, error) {
	key, err := hex.DecodeString(hexKey)
	if err != nil {
		return "", fmt.Errorf("adyen: the HMAC key is not hex")
	}
	return base64.StdEncoding.EncodeToString(provider.HMACSHA256(key, []byte(it.SigningString()))), nil
}

// SignFile signs every item of a standard notification (a file of
// testdata/adyen/, say) again under the hex HMAC key, keeping its content
// otherwise, so a realistic payload can be sent with any key. It fails on
// a body that is not a notification.
func SignFile(body []byte, hexKey string) ([]byte, error) {
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

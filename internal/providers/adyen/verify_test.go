package adyen_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/adyen"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"

	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// Adyen's published HMAC example (the test of Adyen's own Go library,
// src/hmacvalidator): this key, the item below and this signature.
const (
	adyenVectorKey = "DFB1EB5485895CFA84146406857104ABB4CBCABDC8AAF103A624C8F6A3EAAB00"
	adyenVectorSig = "ipnxGCaUZ4l8TUW75a71/ghd2Fe5ffvX0pV4TLTntIc="
)

const adyenVectorBody = `{"live":"false","notificationItems":[{"NotificationRequestItem":{
  "additionalData":{"hmacSignature":"` + adyenVectorSig + `"},
  "amount":{"currency":"EUR","value":1000},
  "eventCode":"EVENT","eventDate":"1970-01-01T00:00:00+00:00",
  "merchantAccountCode":"merchantAccount","merchantReference":"reference",
  "originalReference":"originalReference","paymentMethod":"VISA",
  "pspReference":"pspReference","reason":"reason","success":"true"}}]}`

func TestAdyenPublishedExample(t *testing.T) {
	a := &adyen.Verifier{Keys: []string{adyenVectorKey}}
	evs, err := a.Verify(context.Background(), webhook.Request{Body: []byte(adyenVectorBody)})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Key() != "adyen#pspReference-EVENT" || evs[0].Type != "EVENT" {
		t.Fatalf("Verify = %+v", evs)
	}
	it, err := parseAdyenItem(evs[0].Raw)
	if err != nil || it.SigningString() != "pspReference:originalReference:merchantAccount:reference:1000:EUR:EVENT:true" {
		t.Fatalf("item %+v, %v: signing string %q", it, err, it.SigningString())
	}
	forged := strings.Replace(adyenVectorBody, `"value":1000`, `"value":100000`, 1)
	if _, err := a.Verify(context.Background(), webhook.Request{Body: []byte(forged)}); !errors.Is(err, provider.ErrBadSignature) {
		t.Fatalf("amount changed: err = %v, want ErrBadSignature", err)
	}
}

func adyenItem(psp, code string, success bool) verifytest.AdyenItem {
	return verifytest.AdyenItem{
		PspReference: psp, MerchantAccount: "HookinboxECOM", MerchantReference: "order-" + psp,
		Value: 2500, Currency: "EUR", EventCode: code, Success: success,
		EventDate: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
	}
}

func TestAdyenVerifyBatch(t *testing.T) {
	const key, otherKey = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056", "00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF"
	a := &adyen.Verifier{Keys: []string{otherKey, key}}
	ctx := context.Background()
	body := verifytest.AdyenNotification(key, adyenItem("8816178952380553", "AUTHORISATION", true), adyenItem("8816178952380553", "CAPTURE", true))
	evs, err := a.Verify(ctx, webhook.Request{Body: body})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Key() != "adyen#8816178952380553-AUTHORISATION" || evs[1].Key() != "adyen#8816178952380553-CAPTURE" {
		t.Fatalf("Verify = %+v", evs)
	}
	good := verifytest.AdyenNotification(key, adyenItem("A1", "AUTHORISATION", true))
	oneForged := strings.Replace(string(verifytest.AdyenNotification(key, adyenItem("A1", "AUTHORISATION", true), adyenItem("A2", "REFUND", true))),
		`"merchantReference": "order-A2"`, `"merchantReference": "order-A3"`, 1)
	tests := []struct {
		name string
		body string
		want error
	}{
		{"forged key", string(verifytest.AdyenNotification("ABCD", adyenItem("A1", "AUTHORISATION", true))), provider.ErrBadSignature},
		{"one forged item of two", oneForged, provider.ErrBadSignature},
		{"no signature", strings.Replace(string(good), `"hmacSignature"`, `"hmacSignatureX"`, 1), provider.ErrNoSignature},
		{"no items", `{"live":"false","notificationItems":[]}`, provider.ErrNoSignature},
		{"malformed body", `{"live":`, provider.ErrNoSignature},
		{"missing pspReference", string(verifytest.AdyenNotification(key, adyenItem("", "AUTHORISATION", true))), provider.ErrNoEventID},
		{"bad pspReference", string(verifytest.AdyenNotification(key, adyenItem("a#b", "AUTHORISATION", true))), provider.ErrBadEventID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := a.Verify(ctx, webhook.Request{Body: []byte(tc.body)}); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if err := (&adyen.Verifier{Keys: []string{"not hex"}}).Validate(); err == nil {
		t.Error("Validate accepted a key that is not hex")
	}
	// The Sender signs a realistic file the same way.
	resigned, err := adyen.Sender().Sign(sample.Event{Body: []byte(adyenVectorBody)}, []string{adyenVectorKey}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resigned.Body), adyenVectorSig) {
		t.Errorf("Sign did not reproduce the published signature:\n%s", resigned.Body)
	}
}

// FuzzAdyenVerify: no panic, every error wraps a webhook kind, and every
// accepted item carries a signature an independent HMAC reproduces.
func FuzzAdyenVerify(f *testing.F) {
	f.Add([]byte(adyenVectorBody))
	f.Add([]byte(`{"notificationItems":[{"NotificationRequestItem":{}}]}`))
	f.Add([]byte(`{}`))
	key, _ := hex.DecodeString(adyenVectorKey)
	a := &adyen.Verifier{Keys: []string{adyenVectorKey}}
	f.Fuzz(func(t *testing.T, body []byte) {
		evs, err := a.Verify(context.Background(), webhook.Request{Body: body})
		if err != nil {
			if !errors.Is(err, webhook.ErrUnauthenticated) && !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("error %v wraps no webhook kind", err)
			}
			return
		}
		for _, ev := range evs {
			it, err := parseAdyenItem(ev.Raw)
			if err != nil {
				t.Fatal(err)
			}
			m := hmac.New(sha256.New, key)
			m.Write([]byte(it.SigningString()))
			if got, _ := base64.StdEncoding.DecodeString(strings.TrimSpace(it.AdditionalData.HMACSignature)); !hmac.Equal(got, m.Sum(nil)) {
				t.Fatalf("accepted an item the key did not sign: %s", ev.Raw)
			}
		}
	})
}

// parseAdyenItem decodes an item's Raw as Verify stored it, numbers kept
// as written, as Verify decodes them.
func parseAdyenItem(raw []byte) (adyen.Item, error) {
	var it adyen.Item
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&it); err != nil {
		return adyen.Item{}, fmt.Errorf("adyen item: %w", err)
	}
	return it, nil
}

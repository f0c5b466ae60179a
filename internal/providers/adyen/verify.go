package adyen

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Name is the Provider of every event Verifier.Verify returns.
const Name = "adyen"

// accepted is the body Adyen expects once a batch is accepted.
const accepted = "[accepted]"

// verifier verifies Adyen standard notifications. One POST carries a batch of
// notificationItems, and each item carries its own
// additionalData.hmacSignature: the base64 HMAC-SHA256, under the hex HMAC
// key, of
//
//	pspReference:originalReference:merchantAccountCode:merchantReference:amount.value:amount.currency:eventCode:success
//
// (Adyen's documented field order; an absent field is empty). The scheme
// signs fields, not bytes, so the body is decoded first, but nothing is
// returned unless every item's signature matches: one bad item refuses the
// whole batch and Adyen sends it again. Each item becomes its own event,
// keyed adyen#<pspReference>-<eventCode> (Adyen's duplicate rule: same
// pspReference and eventCode), with the item's JSON as its Raw. Safe for
// concurrent use.
type verifier struct {
	Keys []string // hex HMAC keys; several while rotating
}

// Validate reports a configuration that cannot verify anything: no key, or
// one that is not hex. The error names no key.
func (a *verifier) Validate() error {
	_, err := a.keys()
	return err
}

func (a *verifier) keys() ([][]byte, error) {
	if err := provider.CheckSecrets(Name, a.Keys); err != nil {
		return nil, err
	}
	keys := make([][]byte, 0, len(a.Keys))
	for i, k := range a.Keys {
		b, err := hex.DecodeString(strings.TrimSpace(k))
		if err != nil || len(b) == 0 {
			return nil, fmt.Errorf("adyen verifier: HMAC key %d is not hex", i)
		}
		keys = append(keys, b)
	}
	return keys, nil
}

// adyenBatch is a standard notification.
type adyenBatch struct {
	Live              string `json:"live"`
	NotificationItems []struct {
		Item json.RawMessage `json:"NotificationRequestItem"`
	} `json:"notificationItems"`
}

// Item is the part of a NotificationRequestItem hookinbox reads.
type Item struct {
	PspReference        string `json:"pspReference"`
	OriginalReference   string `json:"originalReference"`
	MerchantAccountCode string `json:"merchantAccountCode"`
	MerchantReference   string `json:"merchantReference"`
	Amount              struct {
		Value    json.Number `json:"value"`
		Currency string      `json:"currency"`
	} `json:"amount"`
	EventCode      string `json:"eventCode"`
	EventDate      string `json:"eventDate"`
	Success        string `json:"success"`
	AdditionalData struct {
		HMACSignature string `json:"hmacSignature"`
	} `json:"additionalData"`
}

// SigningString returns the string Adyen signs for the item.
func (it Item) SigningString() string {
	return strings.Join([]string{
		it.PspReference, it.OriginalReference, it.MerchantAccountCode, it.MerchantReference,
		it.Amount.Value.String(), it.Amount.Currency, it.EventCode, it.Success,
	}, ":")
}

// Verify implements the receiver's verifier. 401 when the body holds no
// item or is no notification at all (nothing signed to check), or when any
// item's signature is missing or wrong; 400, once every item is signed,
// for an item whose pspReference or eventCode cannot make a key.
func (a *verifier) Verify(_ context.Context, r webhook.Request) ([]webhook.Event, error) {
	keys, err := a.keys()
	if err != nil {
		return nil, err
	}
	var batch adyenBatch
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.UseNumber()
	if err := dec.Decode(&batch); err != nil {
		return nil, fmt.Errorf("adyen: %d-byte body is not a notification: %w", len(r.Body), provider.ErrNoSignature)
	}
	if len(batch.NotificationItems) == 0 {
		return nil, fmt.Errorf("adyen: notification has no items: %w", provider.ErrNoSignature)
	}
	items := make([]Item, len(batch.NotificationItems))
	for i, n := range batch.NotificationItems {
		d := json.NewDecoder(bytes.NewReader(n.Item))
		d.UseNumber()
		if err := d.Decode(&items[i]); err != nil {
			return nil, fmt.Errorf("adyen: item %d is not a NotificationRequestItem: %w", i, provider.ErrNoSignature)
		}
		sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(items[i].AdditionalData.HMACSignature))
		if err != nil || len(sig) == 0 {
			return nil, fmt.Errorf("adyen: item %d has no base64 hmacSignature: %w", i, provider.ErrNoSignature)
		}
		data := []byte(items[i].SigningString())
		var want [][]byte
		for _, k := range keys {
			want = append(want, provider.HMACSHA256(k, data))
		}
		if !provider.AnyEqual([][]byte{sig}, want) {
			return nil, fmt.Errorf("adyen: item %d of %d: signature matches none of %d keys: %w", i, len(items), len(keys), provider.ErrBadSignature)
		}
	}
	events := make([]webhook.Event, 0, len(items))
	for i, it := range items {
		if err := provider.CheckEventID(Name, fmt.Sprintf("item %d pspReference", i), it.PspReference); err != nil {
			return nil, err
		}
		if err := provider.CheckEventID(Name, fmt.Sprintf("item %d eventCode", i), it.EventCode); err != nil {
			return nil, err
		}
		if err := provider.CheckEventID(Name, fmt.Sprintf("item %d pspReference-eventCode", i), it.PspReference+"-"+it.EventCode); err != nil {
			return nil, err
		}
		var at time.Time
		if t, err := time.Parse(time.RFC3339, it.EventDate); err == nil {
			at = t.UTC()
		}
		events = append(events, webhook.Event{
			Provider: Name,
			ID:       it.PspReference + "-" + it.EventCode,
			Type:     it.EventCode,
			Created:  at,
			Livemode: batch.Live == "true",
			Raw:      batch.NotificationItems[i].Item,
		})
	}
	return events, nil
}

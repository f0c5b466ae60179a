package verifytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/adyen"
)

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
// signed in additionalData.hmacSignature under the hex HMAC key
// (adyen.Signature), shaped as Adyen sends it. It panics on a key that is
// not hex.
func AdyenNotification(hexKey string, items ...AdyenItem) []byte {
	wrapped := make([]object, len(items))
	for i, it := range items {
		success := strconv.FormatBool(it.Success)
		value := strconv.FormatInt(it.Value, 10)
		signed := adyen.Item{PspReference: it.PspReference, OriginalReference: it.OriginalReference, MerchantAccountCode: it.MerchantAccount,
			MerchantReference: it.MerchantReference, EventCode: it.EventCode, Success: success}
		signed.Amount.Value, signed.Amount.Currency = json.Number(value), it.Currency
		sig, err := adyen.Signature(hexKey, signed)
		if err != nil {
			panic(fmt.Sprintf("verifytest: %v", err))
		}
		item := object{
			{"additionalData", object{
				{"authCode", "058950"},
				{"cardSummary", "1111"},
				{"expiryDate", "03/2030"},
				{"hmacSignature", sig},
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

package gopay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sender is how tools send GoPay's test deliveries: an unsigned
// notification of a payment, whose body the local stand-in serves.
func Sender() sample.Sender {
	return sample.Sender{Provider: Provider{}, Sign: sign, Sample: sampleEvent, Help: sendHelp, Examples: sendExamples}
}

// sign is GoPay's Sign: GET ?id=<payment id>, unsigned, as
// GoPay notifies; the id is ev.ID or the id of the payment ev.Body.
func sign(ev sample.Event, _ []string, _ time.Time) (webhook.Request, error) {
	id := ev.ID
	if id == "" {
		var p struct {
			ID json.Number `json:"id"`
		}
		if err := json.Unmarshal(ev.Body, &p); err != nil || p.ID == "" {
			return webhook.Request{}, fmt.Errorf("gopay: the body is not a payment with an id")
		}
		id = p.ID.String()
	}
	if err := checkID(id); err != nil {
		return webhook.Request{}, err
	}
	return webhook.Request{Method: method, Header: map[string]string{}, Query: map[string]string{"id": id}}, nil
}

// sampleEvent is GoPay's Sample: ev.Body is a payment as the API
// serves it (API, at its path); the notification is keyed by its id,
// with type Notification. When ev.Fresh the payment gets a fresh id.
func sampleEvent(ev sample.Event) (sample.Event, error) {
	var p struct {
		ID json.Number `json:"id"`
	}
	if err := json.Unmarshal(ev.Body, &p); err != nil || p.ID == "" {
		return ev, errors.New("gopay: the body is not a payment with an id")
	}
	ev.ID = p.ID.String()
	if ev.Fresh {
		fresh := "3" + sample.Digits(9)
		ev.Body = bytes.ReplaceAll(ev.Body, []byte(ev.ID), []byte(fresh))
		ev.ID = fresh
	}
	if err := checkID(ev.ID); err != nil {
		return ev, err
	}
	ev.Type = Notification
	ev.API = map[string][]byte{"/payments/payment/" + ev.ID: ev.Body}
	return ev, nil
}

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `GET ?id=<payment id>, unsigned as GoPay sends it; given a payment
file (testdata/gopay/payment.PAID.json) it first sets that payment
on the local stack's GoPay stand-in, whose API the processor asks.`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send gopay testdata/gopay/payment.PAID.json --times 2",
}

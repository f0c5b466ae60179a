package mollie

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sender is how tools send Mollie's test deliveries: an unsigned
// notification of a payment, whose body the local stand-in serves.
func Sender() sample.Sender {
	return sample.Sender{Provider: Provider{}, Sign: sign, Sample: sampleEvent, Help: sendHelp, Examples: sendExamples}
}

// sign is Mollie's Sign: the notification of the payment ev is about: ev.ID,
// or else the id of the payment in ev.Body (as Mollie's API serves it).
// Mollie signs nothing, so secrets and at are not used.
func sign(ev sample.Event, _ []string, _ time.Time) (webhook.Request, error) {
	id := ev.ID
	if id == "" {
		var p struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(ev.Body, &p); err != nil {
			return webhook.Request{}, fmt.Errorf("mollie: the body is not a payment: %w", err)
		}
		id = p.ID
	}
	if err := checkID(id); err != nil {
		return webhook.Request{}, err
	}
	body, header := notify(id)
	return webhook.Request{Method: http.MethodPost, Header: header, Body: body}, nil
}

// sampleEvent is Mollie's Sample: ev.Body is a payment as the API
// serves it (API, at its path); the notification is keyed by its id and
// handled under its status. When ev.Fresh the payment gets a fresh id.
func sampleEvent(ev sample.Event) (sample.Event, error) {
	var p struct{ ID, Status string }
	if err := json.Unmarshal(ev.Body, &p); err != nil || p.ID == "" || p.Status == "" {
		return ev, errors.New("mollie: the body is not a payment with an id and a status")
	}
	ev.ID = p.ID
	if ev.Fresh {
		fresh := "tr_" + sample.Token()[:10]
		ev.Body = bytes.ReplaceAll(ev.Body, []byte(ev.ID), []byte(fresh))
		ev.ID = fresh
	}
	if err := checkID(ev.ID); err != nil {
		return ev, err
	}
	ev.Type = p.Status
	ev.API = map[string][]byte{"/v2/payments/" + ev.ID: ev.Body}
	return ev, nil
}

// sendHelp is `hookinbox send`'s help for this provider.
const sendHelp = `POST id=<payment id>, unsigned as Mollie sends it; given a
payment file (testdata/mollie/payment.paid.json) it first sets
that payment on the local stack's Mollie stand-in.`

// sendExamples are `hookinbox send`'s examples for this provider.
var sendExamples = []string{
	"hookinbox send mollie testdata/mollie/payment.paid.json --times 2",
}

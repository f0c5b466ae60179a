package gopay

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/hookinbox/hookinbox/provider"
)

// Sample implements provider.Sampler: ev.Body is a payment as the API
// serves it (API, at its path); the notification is keyed by its id,
// with type Notification. When ev.Fresh the payment gets a fresh id.
func (Provider) Sample(ev provider.TestEvent) (provider.TestEvent, error) {
	var p struct {
		ID json.Number `json:"id"`
	}
	if err := json.Unmarshal(ev.Body, &p); err != nil || p.ID == "" {
		return ev, errors.New("gopay: the body is not a payment with an id")
	}
	ev.ID = p.ID.String()
	if ev.Fresh {
		fresh := "3" + provider.Digits(9)
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

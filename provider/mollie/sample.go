package mollie

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/hookinbox/hookinbox/provider"
)

// Sample implements provider.Sampler: ev.Body is a payment as the API
// serves it (API, at its path); the notification is keyed by its id and
// handled under its status. When ev.Fresh the payment gets a fresh id.
func (Provider) Sample(ev provider.TestEvent) (provider.TestEvent, error) {
	var p struct{ ID, Status string }
	if err := json.Unmarshal(ev.Body, &p); err != nil || p.ID == "" || p.Status == "" {
		return ev, errors.New("mollie: the body is not a payment with an id and a status")
	}
	ev.ID = p.ID
	if ev.Fresh {
		fresh := "tr_" + provider.Token()[:10]
		ev.Body = bytes.ReplaceAll(ev.Body, []byte(ev.ID), []byte(fresh))
		ev.ID = fresh
	}
	if err := CheckID(ev.ID); err != nil {
		return ev, err
	}
	ev.Type = p.Status
	ev.API = map[string][]byte{"/v2/payments/" + ev.ID: ev.Body}
	return ev, nil
}

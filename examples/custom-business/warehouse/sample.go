package warehouse

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sender is how tools send the warehouse's test deliveries: `go tool
// hookinbox send warehouse shipment.dispatched` and hookinboxtest.
func Sender() sample.Sender {
	return sample.Sender{Provider: Provider{}, Sign: sign, Sample: sampleEvent,
		Help: "X-Warehouse-Signature (hex HMAC-SHA256 of the body)", Examples: []string{"hookinbox send warehouse shipment.dispatched"}}
}

// sign returns ev.Body signed with the first secret.
func sign(ev sample.Event, secrets []string, _ time.Time) (webhook.Request, error) {
	secret, err := sample.FirstSecret(Name, secrets)
	if err != nil {
		return webhook.Request{}, err
	}
	return webhook.Request{Method: "POST", Body: ev.Body, Header: map[string]string{
		"content-type": "application/json",
		Header:         hex.EncodeToString(provider.HMACSHA256([]byte(secret), ev.Body)),
	}}, nil
}

// sampleEvent returns the event keyed by its id, with its type; when
// ev.Fresh (a sample sent by name) with a fresh id, as a new event has.
func sampleEvent(ev sample.Event) (sample.Event, error) {
	var head struct{ ID, Type string }
	if err := json.Unmarshal(ev.Body, &head); err != nil || head.ID == "" {
		return ev, fmt.Errorf("warehouse: not an event with an id")
	}
	ev.ID, ev.Type = head.ID, head.Type
	if ev.Fresh {
		ev.ID = "wh_evt_" + sample.Token()
		ev.Body = sample.ReplaceString(ev.Body, head.ID, ev.ID)
	}
	return ev, nil
}

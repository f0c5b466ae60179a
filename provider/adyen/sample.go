package adyen

import (
	"encoding/json"
	"errors"

	"github.com/hookinbox/hookinbox/provider"
)

// Sample implements provider.Sampler: a notification of one item, keyed
// "<pspReference>-<eventCode>" with type eventCode; when ev.Fresh, with
// a fresh pspReference.
func (Provider) Sample(ev provider.TestEvent) (provider.TestEvent, error) {
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
		psp := provider.Digits(16)
		ev.Body = provider.ReplaceString(ev.Body, it.PspReference, psp)
		it.PspReference = psp
	}
	ev.ID, ev.Type = it.PspReference+"-"+it.EventCode, it.EventCode
	return ev, nil
}

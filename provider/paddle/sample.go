package paddle

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/hookinbox/hookinbox/provider"
)

// Sample implements provider.Sampler: the event keyed by its event_id
// with its event_type; when ev.Fresh, with a fresh event_id and data.id
// (the same prefix, new lower-case letters).
func (Provider) Sample(ev provider.TestEvent) (provider.TestEvent, error) {
	var head struct {
		EventID   string `json:"event_id"`
		EventType string `json:"event_type"`
		Data      struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(ev.Body, &head); err != nil || head.EventID == "" {
		return ev, errors.New("paddle: not an event with an event_id")
	}
	if ev.Fresh {
		for _, old := range []*string{&head.EventID, &head.Data.ID} {
			if *old == "" {
				continue
			}
			fresh := strings.ToLower(provider.FreshID(*old))
			ev.Body = provider.ReplaceString(ev.Body, *old, fresh)
			*old = fresh
		}
	}
	ev.ID, ev.Type = head.EventID, head.EventType
	return ev, nil
}

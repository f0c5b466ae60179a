package standard

import (
	"encoding/json"
	"fmt"

	"github.com/hookinbox/hookinbox/provider"
)

// Sample implements provider.Sampler: the message id ev.ID or a fresh
// msg_ one, the body's type, and, when ev.Fresh, a fresh data.id (the
// same prefix, new letters).
func (Provider) Sample(ev provider.TestEvent) (provider.TestEvent, error) {
	var msg struct {
		Type string `json:"type"`
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(ev.Body, &msg); err != nil || msg.Type == "" {
		return ev, fmt.Errorf("standard: not a message with a type: %v", err)
	}
	if ev.ID == "" {
		ev.ID = "msg_" + provider.Token()
	}
	ev.Type = msg.Type
	if old := msg.Data.ID; ev.Fresh && old != "" {
		ev.Body = provider.ReplaceString(ev.Body, old, provider.FreshID(old))
	}
	return ev, nil
}

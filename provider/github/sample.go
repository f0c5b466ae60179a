package github

import (
	"fmt"
	"strings"

	"github.com/hookinbox/hookinbox/provider"
)

// Sample implements provider.Sampler: the delivery id ev.ID or a fresh
// one, the event name ev.Type or the file's name (issues.json: issues).
func (Provider) Sample(ev provider.TestEvent) (provider.TestEvent, error) {
	if ev.Type = eventName(ev); ev.Type == "" {
		return ev, fmt.Errorf("github: no event name")
	}
	if ev.ID == "" {
		ev.ID = provider.UUID()
	}
	return ev, nil
}

// eventName is ev's event name: ev.Type, or the file's name.
func eventName(ev provider.TestEvent) string {
	if ev.Type != "" {
		return ev.Type
	}
	return strings.TrimSuffix(ev.File, ".json")
}

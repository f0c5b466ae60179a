package inboxtest

import (
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// Event returns a verified-looking event with the given id.
func Event(id string) webhook.Event {
	return webhook.Event{
		Provider: "stripe",
		ID:       id,
		Type:     "checkout.session.completed",
		Created:  t0.Add(-time.Minute),
		Raw:      []byte(`{"id":"` + id + `","type":"checkout.session.completed"}`),
	}
}

// LargeEvent returns an event like Event whose payload is too large to
// ride in its claim (inbox.InlineMaxRaw), so it is stored in its own item.
func LargeEvent(id string) webhook.Event {
	ev := Event(id)
	ev.Raw = []byte(`{"id":"` + id + `","type":"checkout.session.completed","padding":"` + strings.Repeat("x", inbox.InlineMaxRaw) + `"}`)
	return ev
}

// kibEvent returns an event like Event with a 1 KiB payload: it rides in
// its claim only compressed.
func kibEvent(id string) webhook.Event {
	ev := Event(id)
	ev.Raw = []byte(`{"id":"` + id + `","type":"checkout.session.completed","metadata":{"note":"` + strings.Repeat("thank you ", 95) + `"}}`)
	return ev
}

// HugeEvent returns an event like Event whose payload is one byte over
// inbox.MaxPayloadBytes: too large for an item, so it is kept in S3.
func HugeEvent(id string) webhook.Event {
	ev := Event(id)
	head := `{"id":"` + id + `","type":"checkout.session.completed","padding":"`
	ev.Raw = []byte(head + strings.Repeat("x", inbox.MaxPayloadBytes+1-len(head)-2) + `"}`)
	return ev
}

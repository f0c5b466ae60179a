package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/hookinbox/hookinbox/webhook"
)

// Event is one event of a corpus: the provider it comes from, its ID and
// type, and its JSON exactly as it will be delivered.
type Event struct {
	Provider string
	ID       string
	Type     string
	Raw      []byte
}

// Key returns the event's inbox key.
func (e Event) Key() webhook.Key { return webhook.NewKey(e.Provider, e.ID) }

// maxLine bounds one JSONL line: Stripe events are at most a few hundred KB.
const maxLine = 4 << 20

// ReadEvents reads a corpus: one JSON object a line, each a Stripe event
// ({"object":"event",...}) as GET /v1/events lists it and as webhooks
// deliver it, a whole page of that list ({"object":"list","data":[...]}),
// whose events are taken in the order Stripe lists them (newest first), or
// another provider's delivery (deliveryObject: GitHub, Shopify, Standard
// Webhooks, Adyen), which chaos signs as that provider does.
// Blank lines are skipped. An event without an ID or type, an ID the
// receiver would refuse, or an ID seen before is an error naming the line.
func ReadEvents(r io.Reader) ([]Event, error) {
	var evs []Event
	seen := map[webhook.Key]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var head struct {
			Object string          `json:"object"`
			Data   json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return nil, fmt.Errorf("line %d: not a JSON object: %v", n, err)
		}
		if head.Object == deliveryObject {
			ev, err := providerEvent(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			if first, ok := seen[ev.Key()]; ok {
				return nil, fmt.Errorf("line %d: event %s is on line %d already: give each event once, chaos delivers the copies", n, ev.Key(), first)
			}
			seen[ev.Key()] = n
			evs = append(evs, ev)
			continue
		}
		raws := [][]byte{line}
		if head.Object == "list" {
			var page []json.RawMessage
			if err := json.Unmarshal(head.Data, &page); err != nil {
				return nil, fmt.Errorf("line %d: a list whose data is not an array: %v", n, err)
			}
			raws = raws[:0]
			for _, d := range page {
				raws = append(raws, d)
			}
		}
		for _, raw := range raws {
			ev, err := stripeEvent(raw)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			if first, ok := seen[ev.Key()]; ok {
				return nil, fmt.Errorf("line %d: event %s is on line %d already: give each event once, chaos delivers the copies", n, ev.ID, first)
			}
			seen[ev.Key()] = n
			evs = append(evs, ev)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	return evs, nil
}

// stripeEvent reads the head of one Stripe event, keeping a copy of raw.
func stripeEvent(raw []byte) (Event, error) {
	var head struct {
		ID     string `json:"id"`
		Object string `json:"object"`
		Type   string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return Event{}, fmt.Errorf("not a JSON object: %v", err)
	}
	switch {
	case head.Object != "" && head.Object != "event":
		return Event{}, fmt.Errorf("object %q is not a Stripe event", head.Object)
	case head.Type == "":
		return Event{}, fmt.Errorf("event %q has no type", head.ID)
	}
	if err := webhook.ValidateEventID(head.ID); err != nil {
		return Event{}, fmt.Errorf("event id: %w", err)
	}
	return Event{Provider: "stripe", ID: head.ID, Type: head.Type, Raw: bytes.Clone(raw)}, nil
}

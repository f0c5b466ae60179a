package queue

import (
	"encoding/json"
	"fmt"

	"github.com/hookinbox/hookinbox/webhook"
)

// Envelope is the body of every message on the events queue. It names the
// event and carries no payload: the payload is stored once in the inbox, so
// the message stays small and a replay needs only the key.
type Envelope struct {
	Key  webhook.Key `json:"key"`
	Type string      `json:"type,omitempty"`
	// Rounds is how many times the processor sent the message again,
	// fresh, on the last receive SQS allows: a replay or a new claim
	// starts again from zero. It bounds the attempts taken back because
	// nothing was tried (webhook.ErrBusy).
	Rounds int `json:"rounds,omitempty"`
}

// Marshal returns the envelope as the JSON message body.
func (e Envelope) Marshal() string {
	b, _ := json.Marshal(e) // two strings: encoding cannot fail
	return string(b)
}

// ParseEnvelope decodes a message body. A body that is not an envelope with
// a well-formed key is webhook.ErrMalformed: no retry can fix it.
func ParseEnvelope(body string) (Envelope, error) {
	var e Envelope
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		return Envelope{}, fmt.Errorf("%w: envelope: %v", webhook.ErrMalformed, err)
	}
	if _, err := webhook.ParseKey(string(e.Key)); err != nil {
		return Envelope{}, fmt.Errorf("envelope: %w", err)
	}
	return e, nil
}

package queue

import (
	"testing"

	"github.com/hookinbox/hookinbox/webhook"
)

func TestEnvelopeRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		env  Envelope
		want string
	}{
		{Envelope{Key: "stripe#evt_1", Type: "checkout.session.completed"}, `{"key":"stripe#evt_1","type":"checkout.session.completed"}`},
		{Envelope{Key: "stripe#evt_1"}, `{"key":"stripe#evt_1"}`},
	} {
		if got := tc.env.Marshal(); got != tc.want {
			t.Errorf("Marshal() = %s, want %s", got, tc.want)
		}
	}
	env := Envelope{Key: "stripe#evt_1", Type: "checkout.session.completed"}
	got, err := ParseEnvelope(env.Marshal())
	if err != nil || got != env {
		t.Fatalf("round trip = %+v, %v; want %+v", got, err, env)
	}
	for _, body := range []string{"", "not json", `{"key":"nope"}`, `{"type":"x"}`} {
		if _, err := ParseEnvelope(body); !webhook.IsPermanent(err) {
			t.Errorf("ParseEnvelope(%q) error = %v, want a permanent (malformed) error", body, err)
		}
	}
}

package inbox

import (
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

func TestPayloadItemMarksTheClaim(t *testing.T) {
	c := Claim{
		Event: webhook.Event{Provider: "stripe", ID: "evt_1", Raw: []byte("{}")},
		At:    time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.FixedZone("CET", 3600)),
		TTL:   time.Hour + 500*time.Millisecond,
	}
	got, want := c.PayloadItem(), c.NewItem()
	if got.Key != want.Key || !got.ReceivedAt.Equal(want.ReceivedAt) || formatTime(got.ReceivedAt) != formatTime(want.ReceivedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Errorf("PayloadItem = %+v, want the Key, ReceivedAt and ExpiresAt of %+v", got, want)
	}
}

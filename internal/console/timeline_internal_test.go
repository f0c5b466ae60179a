package console

import (
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
)

// TestTimelineSaysWhenAMessageWasNotSent: a claim whose send failed is
// marked unsent (its enqueued_at before its claim): the timeline says it
// was not sent, never that a message went out before it was received.
func TestTimelineSaysWhenAMessageWasNotSent(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		enqueued time.Time
		want     string
	}{
		{"sent with its claim", at, ""},
		{"sent again", at.Add(time.Minute), "message sent"},
		{"unsent", at.Add(-24 * time.Hour), "not sent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps := timeline(Event{Item: inbox.Item{Key: "stripe#evt_1", ReceivedAt: at, EnqueuedAt: tc.enqueued}})
			got := ""
			if len(steps) > 1 {
				got = steps[1].What
			}
			if got != tc.want || steps[len(steps)-1].At.Before(at) {
				t.Errorf("second step %q (steps %+v); want %q, none before the claim", got, steps, tc.want)
			}
		})
	}
}

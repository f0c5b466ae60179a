package processor

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/webhook"
)

// pause is a destination's answer that asks for a pause (Retry-After).
func pause(d time.Duration) error {
	return webhook.RetryAfter(fmt.Errorf("destination crm: 429 (retry after %v)", d), d)
}

// TestDecideDestinations: an attempt whose destinations were all busy is
// taken back (not counted, even on the last receive) for MaxBusyRounds
// rounds of receives, counted after them, and a destination's
// Retry-After lengthens the backoff, up to BackoffMax.
func TestDecideDestinations(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	busy := fmt.Errorf("effect destination:slow of stripe#evt_1: %w", fmt.Errorf("destination slow: %w", webhook.ErrBusy))
	item := func(attempts int) inbox.Item { return inbox.Item{Attempts: attempts} }
	const failedNote = "event FAILED; will retry"
	busyNote := "destinations busy; back soon, the attempt not counted"
	roundsOut := "nothing tried in 20 rounds of receives, so the attempt counts; the last: "
	tests := []struct {
		name string
		a    attempt
		want decision
	}{
		{"busy: uncounted, back after a short backoff", attempt{err: busy, item: item(1), receives: 1},
			decision{result: inbox.Result{Status: inbox.Failed, Error: busy.Error(), At: now, Uncounted: true}, retryIn: 5 * time.Second,
				uncounted: true, level: slog.LevelInfo, note: busyNote}},
		{"busy, asking for a pause: back after it, uncounted", attempt{err: webhook.RetryAfter(busy, 2*time.Minute), item: item(1), receives: 1},
			decision{result: inbox.Result{Status: inbox.Failed, Error: busy.Error(), At: now, Uncounted: true}, retryIn: 2 * time.Minute,
				uncounted: true, level: slog.LevelInfo, note: busyNote}},
		{"busy on the last receive, tries used up: still not parked", attempt{err: busy, item: item(6), receives: 5},
			decision{result: inbox.Result{Status: inbox.Failed, Error: busy.Error(), At: now, Uncounted: true}, retryIn: 80 * time.Second,
				uncounted: true, level: slog.LevelInfo, note: busyNote}},
		{"busy on the last receive of the last round, tries used up: parked", attempt{err: busy, item: item(5), receives: 5, rounds: DefaultMaxBusyRounds},
			decision{result: inbox.Result{Status: inbox.Dead, Outcome: "parked in DLQ", Error: roundsOut + busy.Error(), At: now}, park: true,
				level: slog.LevelInfo, note: "event DEAD"}},
		{"busy once the rounds are out, tries left: counted", attempt{err: busy, item: item(1), receives: 1, rounds: DefaultMaxBusyRounds},
			decision{result: inbox.Result{Status: inbox.Failed, Error: roundsOut + busy.Error(), At: now}, retryIn: 5 * time.Second,
				level: slog.LevelWarn, note: failedNote}},
		{"Retry-After longer than the backoff", attempt{err: errors.Join(pause(2 * time.Minute)), item: item(1), receives: 1},
			decision{result: inbox.Result{Status: inbox.Failed, Error: pause(2 * time.Minute).Error(), At: now}, retryIn: 2 * time.Minute,
				level: slog.LevelWarn, note: failedNote}},
		{"Retry-After shorter than the backoff", attempt{err: pause(time.Second), item: item(3), receives: 3},
			decision{result: inbox.Result{Status: inbox.Failed, Error: pause(time.Second).Error(), At: now}, retryIn: 20 * time.Second,
				level: slog.LevelWarn, note: failedNote}},
		{"Retry-After past BackoffMax: back after it, the try counted", attempt{err: pause(time.Hour), item: item(1), receives: 1},
			decision{result: inbox.Result{Status: inbox.Failed, Error: pause(time.Hour).Error(), At: now}, retryIn: 15 * time.Minute,
				level: slog.LevelWarn, note: failedNote}},
		{"Retry-After past BackoffMax on the last try: parked", attempt{err: pause(24 * time.Hour), item: item(5), receives: 5},
			decision{result: inbox.Result{Status: inbox.Dead, Outcome: "parked in DLQ", Error: pause(24 * time.Hour).Error(), At: now}, park: true,
				level: slog.LevelInfo, note: "event DEAD"}},
	}
	cfg := Config{}.withDefaults()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.a.now, tt.a.jitter, tt.a.eventType = now, 0.5, "t.x"
			got := cfg.decide(tt.a)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(decision{})); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}

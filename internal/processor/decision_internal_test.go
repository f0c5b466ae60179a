package processor

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestDecide: what becomes of an event and its message after an attempt,
// for every kind of outcome, with the default configuration and a jitter
// draw of one half.
func TestDecide(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	infraErr := sdkError("DynamoDB", &smithyhttp.RequestSendError{Err: errors.New("i/o timeout")})
	refused := sdkError("DynamoDB", answered(400, "ValidationException"))
	notFound := fmt.Errorf("fetch gopay#1: 404: %w", provider.ErrNotFound)
	item := func(attempts, infraFailures int) inbox.Item {
		return inbox.Item{Attempts: attempts, InfraFailures: infraFailures}
	}
	failed := func(reason string, infra bool) inbox.Result {
		return inbox.Result{Status: inbox.Failed, Error: reason, At: now, Infrastructure: infra}
	}
	dead := func(reason string, infra bool) inbox.Result {
		return inbox.Result{Status: inbox.Dead, Outcome: "parked in DLQ", Error: reason, At: now, Infrastructure: infra}
	}
	const (
		failedNote = "event FAILED; will retry"
		infraNote  = "event FAILED: the infrastructure is unavailable; will retry, its tries untouched"
	)
	tests := []struct {
		name string
		a    attempt
		want decision
	}{
		{"done", attempt{item: item(1, 0), receives: 1},
			decision{result: inbox.Result{Status: inbox.Done, Outcome: "effects done", At: now}, level: slog.LevelInfo, note: "event DONE"}},
		{"no handler", attempt{err: fmt.Errorf("x: %w", webhook.ErrNoHandler), item: item(1, 0), receives: 1},
			decision{result: inbox.Result{Status: inbox.Ignored, Outcome: "no handler for t.x", At: now}, level: slog.LevelInfo, note: "event IGNORED"}},
		{"transient, first try: backoff of half of 10 s", attempt{err: errors.New("smtp down"), item: item(1, 0), receives: 1},
			decision{result: failed("smtp down", false), retryIn: 5 * time.Second, level: slog.LevelWarn, note: failedNote}},
		{"transient, third try: half of 40 s", attempt{err: errors.New("smtp down"), item: item(3, 0), receives: 3},
			decision{result: failed("smtp down", false), retryIn: 20 * time.Second, level: slog.LevelWarn, note: failedNote}},
		{"transient, last receive but tries left: retried", attempt{err: errors.New("smtp down"), item: item(4, 0), receives: 5},
			decision{result: failed("smtp down", false), retryIn: 40 * time.Second, level: slog.LevelWarn, note: failedNote}},
		{"transient, last receive, out of tries: parked", attempt{err: errors.New("smtp down"), item: item(5, 0), receives: 5},
			decision{result: dead("smtp down", false), park: true, level: slog.LevelInfo, note: "event DEAD"}},
		{"parked, but the DLQ refused: retried", attempt{err: errors.New("smtp down"), item: item(5, 0), receives: 5, parkFailed: true},
			decision{result: failed("smtp down", false), retryIn: 80 * time.Second, level: slog.LevelWarn, note: failedNote}},
		{"permanent: parked at once", attempt{err: webhook.Permanent(errors.New("no such price")), item: item(1, 0), receives: 1},
			decision{result: dead("no such price", false), park: true, level: slog.LevelInfo, note: "event DEAD"}},
		{"a refusal of the store is the event's try", attempt{err: refused, item: item(1, 0), receives: 1},
			decision{result: failed(refused.Error(), false), retryIn: 5 * time.Second, level: slog.LevelWarn, note: failedNote}},
		{"infrastructure, third failure: 20-40 s", attempt{err: infraErr, item: item(3, 2), receives: 3},
			decision{result: failed(infraErr.Error(), true), retryIn: 30 * time.Second, infraFailures: 3, level: slog.LevelWarn, note: infraNote}},
		{"infrastructure on the last receive: not out of tries", attempt{err: infraErr, item: item(5, 1), receives: 5},
			decision{result: failed(infraErr.Error(), true), retryIn: 15 * time.Second, infraFailures: 2, level: slog.LevelWarn, note: infraNote}},
		{"infrastructure, at its bound: parked", attempt{err: infraErr, item: item(25, 19), receives: 3},
			decision{result: dead("the infrastructure failed 20 attempts; the last: "+infraErr.Error(), true), park: true, infraFailures: 20,
				level: slog.LevelInfo, note: "event DEAD"}},
		{"not found, first try: fetched again, uncounted", attempt{err: notFound, item: item(1, 0), receives: 1, provider: "gopay"},
			decision{result: failed(notFound.Error(), false), retryIn: 5 * time.Second, uncounted: true, level: slog.LevelInfo,
				note: "not found at the provider; fetched once more after a backoff"}},
		{"not found, out of tries: ignored for the window", attempt{err: notFound, item: item(2, 0), receives: 2, provider: "gopay"},
			decision{result: inbox.Result{Status: inbox.Ignored, Outcome: "not found at gopay", Error: notFound.Error(), At: now,
				RenewAfter: now.Add(DefaultNotFoundWindow)}, level: slog.LevelInfo, note: "event IGNORED"}},
		{"not found on the last receive: still not parked", attempt{err: notFound, item: item(5, 0), receives: 5, provider: "gopay"},
			decision{result: inbox.Result{Status: inbox.Ignored, Outcome: "not found at gopay", Error: notFound.Error(), At: now,
				RenewAfter: now.Add(DefaultNotFoundWindow)}, level: slog.LevelInfo, note: "event IGNORED"}},
		{"an erasure that goes on: back in 1-2 s, uncounted, on any receive", attempt{err: fmt.Errorf("erase: %w", privacy.ErrMore), item: item(9, 0), receives: 5},
			decision{result: inbox.Result{Status: inbox.Failed, Error: "erase: " + privacy.ErrMore.Error(), At: now, Uncounted: true},
				retryIn: 2 * time.Second, uncounted: true, level: slog.LevelInfo, note: "erasure goes on; back soon, the attempt not counted"}},
		{"subjects not indexed, out of tries: retried, never parked", attempt{err: fmt.Errorf("%w: denied", errUnindexed), item: item(5, 0), receives: 5},
			decision{result: failed(errUnindexed.Error()+": denied", false), retryIn: 80 * time.Second, level: slog.LevelWarn, note: failedNote}},
		{"subjects not indexed, infrastructure at its bound: never parked", attempt{err: fmt.Errorf("%w: %w", errUnindexed, infraErr), item: item(25, 19), receives: 3},
			decision{result: failed("the infrastructure failed 20 attempts; the last: "+errUnindexed.Error()+": "+infraErr.Error(), true),
				retryIn: 11*time.Minute + 15*time.Second, infraFailures: 20, level: slog.LevelWarn, note: infraNote}},
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

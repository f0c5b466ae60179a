package webhook

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	refused := errors.New("destination crm: 429 Too Many Requests")
	tests := []struct {
		name string
		err  error
		want time.Duration
	}{
		{"none asked", refused, 0},
		{"asked", RetryAfter(refused, time.Minute), time.Minute},
		{"wrapped", fmt.Errorf("effect destination:crm: %w", RetryAfter(refused, time.Minute)), time.Minute},
		{"joined", errors.Join(errors.New("crm down"), RetryAfter(refused, 2*time.Minute)), 2 * time.Minute},
		{"zero asks nothing", RetryAfter(refused, 0), 0},
		{"negative asks nothing", RetryAfter(refused, -time.Minute), 0},
		{"huge", RetryAfter(refused, time.Duration(1<<63-1)), time.Duration(1<<63 - 1)},
		{"two joined: the longer, first", errors.Join(RetryAfter(refused, 3*time.Minute), RetryAfter(errors.New("erp: 503"), time.Second)), 3 * time.Minute},
		{"two joined: the longer, last", errors.Join(RetryAfter(refused, time.Second), RetryAfter(errors.New("erp: 503"), 3*time.Minute)), 3 * time.Minute},
		{"marked twice: the longer", RetryAfter(fmt.Errorf("x: %w", RetryAfter(refused, 3*time.Minute)), time.Second), 3 * time.Minute},
		{"beside a permanent error", errors.Join(Permanent(errors.New("crm: 400")), RetryAfter(refused, time.Minute)), time.Minute},
	}
	for _, tt := range tests {
		if got := RetryAfterOf(tt.err); got != tt.want {
			t.Errorf("%s: RetryAfterOf = %v; want %v", tt.name, got, tt.want)
		}
		if !errors.Is(tt.err, refused) {
			t.Errorf("%s: %v does not wrap the error it marks", tt.name, tt.err)
		}
	}
	if got := RetryAfter(refused, time.Minute).Error(); got != refused.Error() {
		t.Errorf("text %q; want the error's own, %q", got, refused.Error())
	}
	if RetryAfter(nil, time.Minute) != nil {
		t.Error("RetryAfter(nil) is an error")
	}
}

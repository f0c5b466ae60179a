package provider_test

import (
	"errors"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/provider"
)

func TestCheckTimestamp(t *testing.T) {
	now := time.Unix(1712917130, 0)
	tests := []struct {
		name   string
		signed time.Time
		want   error
	}{
		{"now", now, nil},
		{"exactly the tolerance old", now.Add(-5 * time.Minute), nil},
		{"exactly the tolerance ahead", now.Add(5 * time.Minute), nil},
		{"a second too old", now.Add(-5*time.Minute - time.Second), provider.ErrStale},
		{"a second too far ahead", now.Add(5*time.Minute + time.Second), provider.ErrFuture},
		{"the epoch", time.Unix(0, 0), provider.ErrStale},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := provider.CheckTimestamp("test: ts", tt.signed, now, 5*time.Minute)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("CheckTimestamp = %v, want %v", err, tt.want)
			}
		})
	}
}

package receiver

import (
	"errors"
	"fmt"
	"testing"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestReason(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{fmt.Errorf("verify: %w", provider.ErrBadSignature), "bad-signature"},
		{fmt.Errorf("verify: %w", provider.ErrNoSignature), "no-signature"},
		{provider.ErrStale, "stale"},
		{provider.ErrFuture, "future"},
		{provider.ErrNotJSON, "not-json"},
		{provider.ErrBadEventID, "bad-event-id"},
		{fmt.Errorf("%w: 300000 bytes", errTooLarge), "too-large"},
		{errUnknownProvider, "unknown-provider"},
		{errMethodNotAllowed, "method-not-allowed"},
		{fmt.Errorf("gopay: %w", webhook.ErrUnauthenticated), "unauthenticated"},
		{fmt.Errorf("%w: base64", webhook.ErrMalformed), "malformed"},
		{errors.New("dynamodb: throttled"), ""},
	}
	for _, tt := range tests {
		if got := Reason(tt.err); got != tt.want {
			t.Errorf("Reason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

package effects

import (
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/webhook"
)

func TestIdempotencyKey(t *testing.T) {
	long := webhook.NewKey("stripe", "evt_"+strings.Repeat("x", 250))
	tests := []struct {
		name   string
		key    webhook.Key
		effect string
		want   string
	}{
		{"Readable", "stripe#evt_123", "welcome-email", "hookinbox:stripe#evt_123:welcome-email"},
		{"HashedWhenLong", long, "grant-access", "hookinbox:sha256:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := IdempotencyKey(tt.key, tt.effect)
			if !strings.HasPrefix(got, tt.want) || (tt.want == "hookinbox:sha256:" && len(got) != len(tt.want)+64) {
				t.Errorf("IdempotencyKey = %q, want %q...", got, tt.want)
			}
			if len(got) > maxIdempotencyKeyLen {
				t.Errorf("len = %d, more than %d", len(got), maxIdempotencyKeyLen)
			}
			if again := IdempotencyKey(tt.key, tt.effect); again != got {
				t.Errorf("not deterministic: %q then %q", got, again)
			}
		})
	}
	if IdempotencyKey(long, "a") == IdempotencyKey(long, "b") {
		t.Error("hashed keys of different effects are equal")
	}
}

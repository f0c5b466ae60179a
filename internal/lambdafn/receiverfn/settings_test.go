package receiverfn

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/receiver"
)

// TestMaxBodyBytesIsBoundedByWhereBodiesGo: with a body bucket the
// default and the bound are the most Lambda can receive; without one, the
// most a payload item holds.
func TestMaxBodyBytesIsBoundedByWhereBodiesGo(t *testing.T) {
	env := func(bucket, maxBody string) func(string) string {
		return func(k string) string {
			return map[string]string{
				"INBOX_TABLE": "inbox", "EVENTS_QUEUE_URL": "https://sqs.example/q",
				"STRIPE_WEBHOOK_SECRET": "whsec_x", "MAX_BODY_BYTES": maxBody, "BODY_BUCKET": bucket,
			}[k]
		}
	}
	for _, tc := range []struct {
		name, bucket, value string
		want                int64 // 0: refused
	}{
		{"default", "bodies", "", 6_258_688},
		{"at the bound", "bodies", strconv.Itoa(receiver.DefaultMaxBodyBytes), receiver.DefaultMaxBodyBytes},
		{"one byte over", "bodies", strconv.Itoa(receiver.DefaultMaxBodyBytes + 1), 0},
		{"no bucket: default", "", "", inbox.MaxPayloadBytes},
		{"no bucket: at the bound", "", strconv.Itoa(inbox.MaxPayloadBytes), inbox.MaxPayloadBytes},
		{"no bucket: one byte over", "", strconv.Itoa(inbox.MaxPayloadBytes + 1), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := LoadSettings(env(tc.bucket, tc.value))
			if tc.want == 0 {
				if err == nil || !strings.Contains(err.Error(), "MAX_BODY_BYTES") {
					t.Errorf("LoadSettings: %v, want MAX_BODY_BYTES refused", err)
				}
				return
			}
			if err != nil || s.MaxBodyBytes != tc.want {
				t.Errorf("LoadSettings = %d, %v; want %d", s.MaxBodyBytes, err, tc.want)
			}
		})
	}
}

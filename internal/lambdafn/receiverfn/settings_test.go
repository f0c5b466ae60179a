package receiverfn

import (
	"strconv"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/builtin"
)

func TestMaxBodyBytesIsBoundedByThePayloadItem(t *testing.T) {
	env := func(maxBody string) func(string) string {
		return func(k string) string {
			return map[string]string{
				"INBOX_TABLE": "inbox", "EVENTS_QUEUE_URL": "https://sqs.example/q",
				"STRIPE_WEBHOOK_SECRET": "whsec_x", "MAX_BODY_BYTES": maxBody,
			}[k]
		}
	}
	for _, tc := range []struct {
		name, value string
		want        int64 // 0: refused
	}{
		{"default", "", receiver.DefaultMaxBodyBytes},
		{"at the bound", strconv.Itoa(inbox.MaxPayloadBytes), inbox.MaxPayloadBytes},
		{"one byte over", strconv.Itoa(inbox.MaxPayloadBytes + 1), 0},
		{"a megabyte", "1048576", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := LoadSettings(env(tc.value), builtinRegistry(t))
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

func builtinRegistry(t *testing.T) *provider.Registry {
	t.Helper()
	reg, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

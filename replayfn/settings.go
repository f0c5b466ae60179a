package replayfn

import (
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
)

// settings is the dlq-replay function's environment, as template.yaml sets it.
type settings struct {
	lambdafn.Inbox
	DLQURL     string // EVENTS_DLQ_URL
	DefaultMax int    // REPLAY_MAX, default 100: a DLQ replay's max when the request gives none
}

// loadSettings reads the settings through getenv, reporting every missing
// or invalid key in one error.
func loadSettings(getenv func(string) string) (settings, error) {
	r := envconfig.New(getenv)
	s := settings{
		Inbox:      lambdafn.ReadInbox(r),
		DLQURL:     r.Required("EVENTS_DLQ_URL"),
		DefaultMax: int(r.Int("REPLAY_MAX", 100)),
	}
	return s, r.Err()
}

package replayfn

import (
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
)

// Settings is the dlq-replay function's environment, as template.yaml sets it.
type Settings struct {
	lambdafn.Inbox
	DLQURL     string // EVENTS_DLQ_URL
	DefaultMax int    // REPLAY_MAX, default 100: a DLQ replay's max when the request gives none
}

// LoadSettings reads the settings through getenv, reporting every missing
// or invalid key in one error.
func LoadSettings(getenv func(string) string) (Settings, error) {
	r := envconfig.New(getenv)
	s := Settings{
		Inbox:      lambdafn.ReadInbox(r),
		DLQURL:     r.Required("EVENTS_DLQ_URL"),
		DefaultMax: int(r.Int("REPLAY_MAX", 100)),
	}
	return s, r.Err()
}

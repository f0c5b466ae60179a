package processorfn

import (
	"time"

	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/processor"
)

// settings is the processor function's environment, as template.yaml sets it.
// The business brings its own settings (the example shop: shop.FromEnvIfSet).
type settings struct {
	lambdafn.Inbox
	DLQURL          string        // EVENTS_DLQ_URL
	SecretMaxAge    time.Duration // SECRET_MAX_AGE, default 5m: how long a key from Secrets Manager is used before a reload
	SecretReload    time.Duration // SECRET_RELOAD_INTERVAL, default 1m: the least time between two loads of a secret
	LeaseFor        time.Duration // LEASE_DURATION, default 45s: the function timeout plus a margin
	Budget          time.Duration // MESSAGE_BUDGET, default 10s: the least time left to start a message
	Reserve         time.Duration // OUTCOME_RESERVE, default 2s: kept after the effects to write the outcome
	MaxReceiveCount int           // MAX_RECEIVE_COUNT, default 5: the queue's redrive setting
	BackoffMax      time.Duration // BACKOFF_MAX, default 15m (the most): the longest wait before a retry
	MaxInfraFails   int           // MAX_INFRA_FAILURES, default 20: attempts the infrastructure may fail before the event is parked
	NotFoundTries   int           // NOT_FOUND_TRIES, default 2: tries of an id-only event its provider does not know before it ends IGNORED
	NotFoundWindow  time.Duration // NOT_FOUND_WINDOW, default 15m: how long notifications of such an event are duplicates, not fetched
	NotFoundHold    time.Duration // NOT_FOUND_HOLD, default 10s: the same after the first claim of an id its provider did not know
}

// loadSettings reads the settings through getenv, reporting every missing
// or invalid key in one error.
func loadSettings(getenv func(string) string) (settings, error) {
	r := envconfig.New(getenv)
	s := settings{
		Inbox:           lambdafn.ReadInbox(r),
		DLQURL:          r.Required("EVENTS_DLQ_URL"),
		SecretMaxAge:    r.Duration("SECRET_MAX_AGE", secrets.DefaultMaxAge),
		SecretReload:    r.Duration("SECRET_RELOAD_INTERVAL", secrets.DefaultMinInterval),
		LeaseFor:        r.Duration("LEASE_DURATION", processor.DefaultLeaseFor),
		Budget:          r.Duration("MESSAGE_BUDGET", processor.DefaultBudget),
		Reserve:         r.Duration("OUTCOME_RESERVE", processor.DefaultReserve),
		MaxReceiveCount: int(r.Int("MAX_RECEIVE_COUNT", 5)),
		BackoffMax:      r.Duration("BACKOFF_MAX", 15*time.Minute),
		MaxInfraFails:   int(r.Int("MAX_INFRA_FAILURES", processor.DefaultMaxInfraFailures)),
		NotFoundTries:   int(r.Int("NOT_FOUND_TRIES", processor.DefaultNotFoundTries)),
		NotFoundWindow:  r.Duration("NOT_FOUND_WINDOW", processor.DefaultNotFoundWindow),
		NotFoundHold:    r.Duration("NOT_FOUND_HOLD", processor.DefaultNotFoundHold),
	}
	if s.NotFoundTries < 1 || s.NotFoundTries > s.MaxReceiveCount {
		r.Problem("want NOT_FOUND_TRIES (%d) from 1 to MAX_RECEIVE_COUNT (%d)", s.NotFoundTries, s.MaxReceiveCount)
	}
	if s.NotFoundWindow <= 0 {
		r.Problem("want NOT_FOUND_WINDOW (%v) above zero", s.NotFoundWindow)
	}
	if s.BackoffMax < time.Second || s.BackoffMax > 15*time.Minute || s.BackoffMax%time.Second != 0 {
		r.Problem("want BACKOFF_MAX (%v) in whole seconds from 1s to 15m, the longest delay SQS gives a message", s.BackoffMax)
	}
	if s.MaxInfraFails < 1 {
		r.Problem("want MAX_INFRA_FAILURES (%d) at least 1", s.MaxInfraFails)
	}
	if s.Reserve <= 0 || s.Reserve >= s.Budget || s.Budget >= s.LeaseFor {
		r.Problem("want 0 < OUTCOME_RESERVE (%v) < MESSAGE_BUDGET (%v) < LEASE_DURATION (%v)", s.Reserve, s.Budget, s.LeaseFor)
	}
	return s, r.Err()
}

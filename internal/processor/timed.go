package processor

import (
	"context"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
)

// timed is the middleware that records how long each effect that actually
// runs takes (EffectDuration, by Effect); an effect the ledger skips as
// done is not timed.
func timed(m *metrics.Recorder) effects.Middleware {
	return func(name string, next effects.Func) effects.Func {
		return func(ctx context.Context, ik string) (string, error) {
			defer func(begin time.Time) {
				m.Emit(metrics.Dims{Effect: name}, metrics.Millis(metrics.EffectDuration, time.Since(begin)))
			}(time.Now())
			return next(ctx, ik)
		}
	}
}

package processor

import (
	"context"
	"time"

	"github.com/hookinbox/hookinbox/internal/platform/metrics"
)

// timed is the middleware that records how long each effect that actually
// runs takes (EffectDuration, by Effect); an effect the ledger skips as
// done is not timed.
func timed(m *metrics.Recorder) middleware {
	return func(name string, next effectFunc) effectFunc {
		return func(ctx context.Context, ik string) (string, error) {
			defer func(begin time.Time) {
				m.Emit(metrics.Dims{Effect: name}, metrics.Millis(metrics.EffectDuration, time.Since(begin)))
			}(time.Now())
			return next(ctx, ik)
		}
	}
}

package processor

import (
	"context"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
)

// timedRunner is an effect runner that records how long each effect that
// actually runs takes (EffectDuration, by Effect); an effect the ledger
// skips as done is not timed.
type timedRunner struct {
	effects.Runner
	metrics *metrics.Recorder
}

// Do implements effects.Runner.
func (r timedRunner) Do(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) error) error {
	return r.Runner.Do(ctx, name, func(ctx context.Context, ik string) error {
		defer r.time(name, time.Now())
		return fn(ctx, ik)
	})
}

// DoResult implements effects.ResultRunner.
func (r timedRunner) DoResult(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) (string, error)) error {
	return effects.DoResult(ctx, r.Runner, name, func(ctx context.Context, ik string) (string, error) {
		defer r.time(name, time.Now())
		return fn(ctx, ik)
	})
}

// DoAtMostOnce implements effects.AtMostOnceRunner.
func (r timedRunner) DoAtMostOnce(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) (string, error)) error {
	return effects.AtMostOnce(ctx, r.Runner, name, func(ctx context.Context, ik string) (string, error) {
		defer r.time(name, time.Now())
		return fn(ctx, ik)
	})
}

func (r timedRunner) time(effect string, begin time.Time) {
	r.metrics.Emit(metrics.Dims{Effect: effect}, metrics.Millis(metrics.EffectDuration, time.Since(begin)))
}

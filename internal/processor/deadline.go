package processor

import (
	"context"
	"time"

	"github.com/hookinbox/hookinbox/effects"
)

// deadlineRunner is an effect runner whose effects must end by a deadline
// earlier than its context's: the outside call is cut off there, while the
// ledger reads and records, and the outcome after them, keep the time that
// is left. An effect that answers right at its deadline is still recorded,
// so its retry does not repeat it.
type deadlineRunner struct {
	effects.Runner
	by time.Time
}

// Do implements effects.Runner.
func (r deadlineRunner) Do(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) error) error {
	return r.Runner.Do(ctx, name, func(ctx context.Context, ik string) error {
		ctx, cancel := context.WithDeadline(ctx, r.by)
		defer cancel()
		return fn(ctx, ik)
	})
}

// DoResult implements effects.ResultRunner.
func (r deadlineRunner) DoResult(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) (string, error)) error {
	return effects.DoResult(ctx, r.Runner, name, func(ctx context.Context, ik string) (string, error) {
		ctx, cancel := context.WithDeadline(ctx, r.by)
		defer cancel()
		return fn(ctx, ik)
	})
}

// DoAtMostOnce implements effects.AtMostOnceRunner.
func (r deadlineRunner) DoAtMostOnce(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) (string, error)) error {
	return effects.AtMostOnce(ctx, r.Runner, name, func(ctx context.Context, ik string) (string, error) {
		ctx, cancel := context.WithDeadline(ctx, r.by)
		defer cancel()
		return fn(ctx, ik)
	})
}

package processor

import (
	"context"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/effects"
)

// deadlineRunner is an effect runner whose effects must end by a deadline
// earlier than its context's: the outside call is cut off there, while the
// ledger reads and records, and the outcome after them, keep the time that
// is left. An effect that answers right at its deadline is still recorded,
// so its retry does not repeat it. An effect whose deadline has passed
// before it starts is not started: it fails marked effects.NotDone, so an
// at-most-once effect's intent is released and a retry runs it.
type deadlineRunner struct {
	effects.Runner
	by time.Time
}

// Do implements effects.Runner.
func (r deadlineRunner) Do(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) error) error {
	return r.Runner.Do(ctx, name, func(ctx context.Context, ik string) error {
		_, err := r.bounded(func(ctx context.Context, ik string) (string, error) { return "", fn(ctx, ik) })(ctx, ik)
		return err
	})
}

// DoResult implements effects.ResultRunner.
func (r deadlineRunner) DoResult(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) (string, error)) error {
	return effects.DoResult(ctx, r.Runner, name, r.bounded(fn))
}

// DoAtMostOnce implements effects.AtMostOnceRunner.
func (r deadlineRunner) DoAtMostOnce(ctx context.Context, name string, fn func(ctx context.Context, idempotencyKey string) (string, error)) error {
	return effects.AtMostOnce(ctx, r.Runner, name, r.bounded(fn))
}

// bounded returns fn cut off at r.by, which does not call fn once r.by
// has passed.
func (r deadlineRunner) bounded(fn func(ctx context.Context, idempotencyKey string) (string, error)) func(context.Context, string) (string, error) {
	return func(ctx context.Context, ik string) (string, error) {
		if late := time.Since(r.by); late >= 0 {
			return "", effects.NotDone(fmt.Errorf("not started: its deadline passed %v before it could start: %w",
				late.Round(time.Millisecond), context.DeadlineExceeded))
		}
		ctx, cancel := context.WithDeadline(ctx, r.by)
		defer cancel()
		return fn(ctx, ik)
	}
}

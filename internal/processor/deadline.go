package processor

import (
	"context"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/effects"
)

// notAfter is the middleware that makes effects end by a deadline earlier
// than their context's: the outside call is cut off at by, while the
// ledger reads and records, and the outcome after them, keep the time that
// is left. An effect that answers right at its deadline is still recorded,
// so its retry does not repeat it. An effect whose deadline has passed
// before it starts is not started: it fails marked effects.NotDone, so an
// at-most-once effect's intent is released and a retry runs it.
func notAfter(by time.Time) middleware {
	return func(_ string, next effectFunc) effectFunc {
		return func(ctx context.Context, ik string) (string, error) {
			if late := time.Since(by); late >= 0 {
				return "", effects.NotDone(fmt.Errorf("not started: its deadline passed %v before it could start: %w",
					late.Round(time.Millisecond), context.DeadlineExceeded))
			}
			ctx, cancel := context.WithDeadline(ctx, by)
			defer cancel()
			return next(ctx, ik)
		}
	}
}

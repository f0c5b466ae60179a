package privacy

import (
	"context"
	"time"
)

// SetPace makes e list and erase page events at a time, and start no
// page when late says so.
func SetPace(e *Eraser, page int, late func(context.Context) bool) {
	e.page, e.late = page, func(ctx context.Context, _ time.Duration) bool { return late(ctx) }
}

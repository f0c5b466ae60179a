package metrics

import "time"

// WithClock returns r with its clock replaced; only tests set the clock.
func WithClock(r *Recorder, now func() time.Time) *Recorder {
	r.now = now
	return r
}

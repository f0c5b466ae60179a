package provider

import (
	"fmt"
	"time"
)

// CheckTimestamp refuses a signed timestamp further than tolerance from
// now, either way, as ErrStale or ErrFuture; what names the check in the
// error ("paddle signature: ts"). A timestamp exactly tolerance away is
// accepted. Comparing times, not durations, cannot overflow.
func CheckTimestamp(what string, signed, now time.Time, tolerance time.Duration) error {
	switch {
	case signed.Before(now.Add(-tolerance)):
		return fmt.Errorf("%s is %s old, tolerance %s: %w", what, now.Sub(signed).Round(time.Second), tolerance, ErrStale)
	case signed.After(now.Add(tolerance)):
		return fmt.Errorf("%s is %s ahead, tolerance %s: %w", what, signed.Sub(now).Round(time.Second), tolerance, ErrFuture)
	}
	return nil
}

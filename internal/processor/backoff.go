package processor

import "time"

// backoff returns the visibility delay after the attempt-th failure, for
// a jitter draw in [0, 1): full jitter over an exponential ceiling, at
// least a second.
func (c Config) backoff(attempt int, jitter float64) time.Duration {
	return max(time.Duration(jitter*float64(c.ceiling(attempt))), time.Second)
}

// infraBackoff returns the visibility delay after the n-th failure of the
// infrastructure: a time in the upper half of the exponential ceiling, so
// every wait is longer than the last until BackoffMax, and copies do not
// all come back at once.
func (c Config) infraBackoff(n int, jitter float64) time.Duration {
	ceiling := c.ceiling(n)
	return ceilSecond(ceiling/2 + time.Duration(jitter*float64(ceiling/2)))
}

// ceiling returns min(BackoffMax, backoffBase·2^(n-1)).
func (c Config) ceiling(n int) time.Duration {
	ceiling := c.BackoffMax
	n = max(n, 1)
	if n <= 30 {
		if d := backoffBase << (n - 1); d > 0 && d < ceiling {
			ceiling = d
		}
	}
	return ceiling
}

// ceilSecond rounds d up to whole seconds, at least one: SQS counts
// visibility in seconds, and a message must not come back before d.
func ceilSecond(d time.Duration) time.Duration {
	if d < time.Second {
		return time.Second
	}
	if r := d % time.Second; r != 0 {
		d += time.Second - r
	}
	return d
}

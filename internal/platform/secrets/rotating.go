package secrets

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Defaults of Rotating.
const (
	// DefaultMaxAge is how long loaded values are used before they are
	// loaded again: a secret revoked in Secrets Manager stops working in
	// warm functions within this time.
	DefaultMaxAge = 5 * time.Minute
	// DefaultMinInterval is the least time between two loads after the
	// first, so a flood of bad signatures or refused keys costs at most
	// one Secrets Manager call a minute.
	DefaultMinInterval = time.Minute
)

// ErrStale is returned by Rotating.Values when the values are older than
// their maximum age and could not be loaded again: they are not used, so a
// revoked secret does not keep working while Secrets Manager cannot be read.
var ErrStale = errors.New("secret values are past their maximum age and could not be reloaded")

// Rotating holds the values of a secret that may change while a function
// stays warm (a rolled webhook signing secret, a rolled API key). Values
// are loaded again when they are older than MaxAge, and when a caller
// finds them refused (Refresh); after the first, at most one load happens
// per MinInterval. Loads run under a lock, so concurrent callers share one.
// Values are never logged or put in errors. Safe for concurrent use.
type Rotating struct {
	// Load returns the current values, e.g. List of a Secrets Manager
	// secret.
	Load func(ctx context.Context) ([]string, error)
	// MaxAge is how long loaded values are used; default DefaultMaxAge.
	MaxAge time.Duration
	// MinInterval is the least time between two loads; default
	// DefaultMinInterval.
	MinInterval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	vals     []string
	loadedAt time.Time // when vals were loaded
	triedAt  time.Time // when a load was last tried; zero before the first
}

// Init loads the values for the first time; a function calls it at cold
// start, so a missing or unreadable secret stops the start with a clear
// error.
func (r *Rotating) Init(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.load(ctx)
}

// Values returns the current values, loading them again first when they
// are older than MaxAge. When that load fails, or the last one failed less
// than MinInterval ago, it returns an error wrapping ErrStale instead of
// the old values.
func (r *Rotating) Values(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.vals != nil && r.now().Sub(r.loadedAt) < r.maxAge() {
		return r.vals, nil
	}
	if r.triedAt.After(r.loadedAt) && !r.mayLoad() {
		// The last load failed; the next waits MinInterval.
		return nil, fmt.Errorf("%w (next load in %s)", ErrStale, r.triedAt.Add(r.minInterval()).Sub(r.now()).Round(time.Second))
	}
	if err := r.load(ctx); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStale, err)
	}
	return r.vals, nil
}

// Refresh is called with the values used when they were refused (no
// signature matched, the API answered 401). It returns the values to try
// instead and whether they differ from used: another caller may have
// loaded new ones already; otherwise they are loaded again, unless the
// last load was less than MinInterval ago. A failed load keeps the values
// held and is returned as err with changed false.
func (r *Rotating) Refresh(ctx context.Context, used []string) (vals []string, changed bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.vals != nil && !slices.Equal(r.vals, used) {
		return r.vals, true, nil
	}
	if !r.mayLoad() {
		return r.vals, false, nil
	}
	if err := r.load(ctx); err != nil {
		return r.vals, false, err
	}
	return r.vals, !slices.Equal(r.vals, used), nil
}

// load loads the values; r.mu is held. A failed load keeps the values held.
func (r *Rotating) load(ctx context.Context) error {
	r.triedAt = r.now()
	vals, err := r.Load(ctx)
	if err != nil {
		return err
	}
	if len(vals) == 0 {
		return errors.New("secret has no values")
	}
	r.vals, r.loadedAt = slices.Clone(vals), r.triedAt
	return nil
}

// mayLoad reports whether MinInterval has passed since the last load; r.mu
// is held.
func (r *Rotating) mayLoad() bool {
	return r.triedAt.IsZero() || r.now().Sub(r.triedAt) >= r.minInterval()
}

func (r *Rotating) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Rotating) maxAge() time.Duration {
	if r.MaxAge > 0 {
		return r.MaxAge
	}
	return DefaultMaxAge
}

func (r *Rotating) minInterval() time.Duration {
	if r.MinInterval > 0 {
		return r.MinInterval
	}
	return DefaultMinInterval
}

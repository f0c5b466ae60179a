package verify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// Defaults of Rotating.
const (
	// DefaultReloadInterval is how often Rotating may reload its
	// secrets on a mismatch.
	DefaultReloadInterval = time.Minute
	// DefaultMaxAge is how long Rotating uses loaded secrets before
	// it loads them again.
	DefaultMaxAge = 5 * time.Minute
)

// ErrSecretsStale is returned by Rotating.Verify when its secrets are
// older than MaxAge and cannot be loaded again. It wraps no webhook kind:
// the delivery gets a 5xx and the provider retries.
var ErrSecretsStale = errors.New("signing secrets are past their maximum age and could not be reloaded")

// Rotating is a verifier whose secrets live elsewhere (Secrets Manager)
// and may change while the function stays warm; it works for every
// provider, New building the provider's verifier from the secrets. It
// loads them again in two cases:
//
//   - when they are older than MaxAge, before verifying: a secret revoked
//     in Secrets Manager stops verifying in warm functions within MaxAge.
//     If that load fails the old secrets are not used (ErrSecretsStale),
//     so a revoked secret cannot outlive MaxAge while Secrets Manager is
//     unreachable; the next load is tried after ReloadInterval.
//   - when no signature matches, and the last load was at least
//     ReloadInterval ago, once, then it verifies again: a secret rolled in
//     Secrets Manager takes effect on the next delivery signed with it,
//     without a cold start, and a flood of bad signatures costs at most one
//     load per interval. A failed load here keeps the old secrets.
//
// Safe for concurrent use.
type Rotating struct {
	// Load returns the secrets currently accepted.
	Load func(ctx context.Context) ([]string, error)
	// ReloadInterval is the least time between two loads; default 1 min.
	ReloadInterval time.Duration
	// MaxAge is how long loaded secrets are used; default 5 min.
	MaxAge time.Duration
	// New builds the verifier from the secrets (a Spec's New, bound to its
	// options); it reports a secret that cannot be used.
	New func(secrets []string) (Verifier, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	current  Verifier
	loadedAt time.Time // when the last load was tried
	freshAt  time.Time // when current was loaded
}

// Init loads the secrets for the first time; a function calls it at start,
// so a missing or empty secret stops the cold start with a clear error.
func (r *Rotating) Init(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reload(ctx)
}

// Verify verifies with secrets at most MaxAge old, reloading them once
// when no signature matches.
func (r *Rotating) Verify(ctx context.Context, req webhook.Request) ([]webhook.Event, error) {
	v, err := r.fresh(ctx)
	if err != nil {
		return nil, err
	}
	evs, err := v.Verify(ctx, req)
	if !errors.Is(err, ErrBadSignature) {
		return evs, err
	}
	r.mu.Lock()
	if r.current != v || r.now().Sub(r.loadedAt) >= r.interval() {
		if r.current == v {
			if rerr := r.reload(ctx); rerr != nil {
				r.mu.Unlock()
				return evs, err // keep the old secrets; the load error is not the caller's
			}
		}
		v = r.current
		r.mu.Unlock()
		return v.Verify(ctx, req)
	}
	r.mu.Unlock()
	return evs, err
}

// fresh returns the current verifier, loading the secrets again first when
// they are older than MaxAge.
func (r *Rotating) fresh(ctx context.Context) (Verifier, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if r.current != nil && now.Sub(r.freshAt) < r.maxAge() {
		return r.current, nil
	}
	if r.current != nil && r.loadedAt.After(r.freshAt) && now.Sub(r.loadedAt) < r.interval() {
		// The last load failed; the next waits the interval.
		return nil, fmt.Errorf("verifier: %w (last load %s ago)", ErrSecretsStale, now.Sub(r.loadedAt).Round(time.Second))
	}
	if err := r.reload(ctx); err != nil {
		return nil, fmt.Errorf("verifier: %w: %w", ErrSecretsStale, err)
	}
	return r.current, nil
}

// reload loads the secrets; r.mu is held.
func (r *Rotating) reload(ctx context.Context) error {
	secrets, err := r.Load(ctx)
	r.loadedAt = r.now() // a failed load also waits an interval before the next
	if err != nil {
		return err
	}
	v, err := r.New(secrets)
	if err != nil {
		return err
	}
	r.current, r.freshAt = v, r.loadedAt
	return nil
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

func (r *Rotating) interval() time.Duration {
	if r.ReloadInterval > 0 {
		return r.ReloadInterval
	}
	return DefaultReloadInterval
}

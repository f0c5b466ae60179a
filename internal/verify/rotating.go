package verify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/webhook"
)

// Defaults of RotatingStripe.
const (
	// DefaultReloadInterval is how often RotatingStripe may reload its
	// secrets on a mismatch.
	DefaultReloadInterval = time.Minute
	// DefaultMaxAge is how long RotatingStripe uses loaded secrets before
	// it loads them again.
	DefaultMaxAge = 5 * time.Minute
)

// ErrSecretsStale is returned by RotatingStripe.Verify when its secrets are
// older than MaxAge and cannot be loaded again. It wraps no webhook kind:
// the delivery gets a 5xx and the provider retries.
var ErrSecretsStale = errors.New("signing secrets are past their maximum age and could not be reloaded")

// RotatingStripe is a Stripe verifier whose secrets live elsewhere (Secrets
// Manager) and may change while the function stays warm. It loads them
// again in two cases:
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
type RotatingStripe struct {
	// Load returns the secrets currently accepted.
	Load func(ctx context.Context) ([]string, error)
	// ReloadInterval is the least time between two loads; default 1 min.
	ReloadInterval time.Duration
	// MaxAge is how long loaded secrets are used; default 5 min.
	MaxAge time.Duration
	// Tolerance and Now are as in Stripe.
	Tolerance time.Duration
	Now       func() time.Time

	mu       sync.Mutex
	current  *Stripe
	loadedAt time.Time // when the last load was tried
	freshAt  time.Time // when current was loaded
}

// Init loads the secrets for the first time; a function calls it at start,
// so a missing or empty secret stops the cold start with a clear error.
func (r *RotatingStripe) Init(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reload(ctx)
}

// Verify is Stripe.Verify with secrets at most MaxAge old, reloading them
// once when no signature matches.
func (r *RotatingStripe) Verify(ctx context.Context, signatureHeader string, body []byte) (webhook.Event, error) {
	s, err := r.fresh(ctx)
	if err != nil {
		return webhook.Event{}, err
	}
	ev, err := s.Verify(signatureHeader, body)
	if !errors.Is(err, ErrBadSignature) {
		return ev, err
	}
	r.mu.Lock()
	if r.current != s || r.now().Sub(r.loadedAt) >= r.interval() {
		if r.current == s {
			if rerr := r.reload(ctx); rerr != nil {
				r.mu.Unlock()
				return ev, err // keep the old secrets; the load error is not the caller's
			}
		}
		s = r.current
		r.mu.Unlock()
		return s.Verify(signatureHeader, body)
	}
	r.mu.Unlock()
	return ev, err
}

// fresh returns the current verifier, loading the secrets again first when
// they are older than MaxAge.
func (r *RotatingStripe) fresh(ctx context.Context) (*Stripe, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if r.current != nil && now.Sub(r.freshAt) < r.maxAge() {
		return r.current, nil
	}
	if r.current != nil && r.loadedAt.After(r.freshAt) && now.Sub(r.loadedAt) < r.interval() {
		// The last load failed; the next waits the interval.
		return nil, fmt.Errorf("stripe verifier: %w (last load %s ago)", ErrSecretsStale, now.Sub(r.loadedAt).Round(time.Second))
	}
	if err := r.reload(ctx); err != nil {
		return nil, fmt.Errorf("stripe verifier: %w: %w", ErrSecretsStale, err)
	}
	return r.current, nil
}

// reload loads the secrets; r.mu is held.
func (r *RotatingStripe) reload(ctx context.Context) error {
	secrets, err := r.Load(ctx)
	r.loadedAt = r.now() // a failed load also waits an interval before the next
	if err != nil {
		return err
	}
	s := &Stripe{Secrets: secrets, Tolerance: r.Tolerance, Now: r.Now}
	if err := s.Validate(); err != nil {
		return err
	}
	r.current, r.freshAt = s, r.loadedAt
	return nil
}

func (r *RotatingStripe) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *RotatingStripe) maxAge() time.Duration {
	if r.MaxAge > 0 {
		return r.MaxAge
	}
	return DefaultMaxAge
}

func (r *RotatingStripe) interval() time.Duration {
	if r.ReloadInterval > 0 {
		return r.ReloadInterval
	}
	return DefaultReloadInterval
}

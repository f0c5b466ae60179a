package verify

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/webhook"
)

// DefaultReloadInterval is how often a Rotating verifier may reload its secrets.
const DefaultReloadInterval = time.Minute

// Rotating is a verifier whose secrets live elsewhere (Secrets Manager)
// and may change while the function stays warm. When no signature matches,
// and the secrets were loaded at least ReloadInterval ago, it reloads them
// once and verifies again: a secret rolled in Secrets Manager takes effect
// on the next delivery signed with it, without a cold start, and a flood
// of bad signatures costs at most one load per interval. It works for
// every provider: New builds the provider's verifier from the secrets.
// Safe for concurrent use.
type Rotating struct {
	// Load returns the secrets currently accepted.
	Load func(ctx context.Context) ([]string, error)
	// New builds the verifier from the secrets (a Spec's New, bound to its
	// options); it reports a secret that cannot be used.
	New func(secrets []string) (Verifier, error)
	// ReloadInterval is the least time between two loads; default 1 min.
	ReloadInterval time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	current  Verifier
	loadedAt time.Time
}

// Init loads the secrets for the first time; a function calls it at start,
// so a missing or empty secret stops the cold start with a clear error.
func (r *Rotating) Init(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reload(ctx)
}

// Verify verifies with the current secrets, reloading them once when no
// signature matches.
func (r *Rotating) Verify(ctx context.Context, req webhook.Request) ([]webhook.Event, error) {
	r.mu.Lock()
	v := r.current
	r.mu.Unlock()
	if v == nil {
		return nil, errors.New("verifier: secrets not loaded")
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
	r.current = v
	return nil
}

func (r *Rotating) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Rotating) interval() time.Duration {
	if r.ReloadInterval > 0 {
		return r.ReloadInterval
	}
	return DefaultReloadInterval
}

package verify

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/webhook"
)

// DefaultReloadInterval is how often RotatingStripe may reload its secrets.
const DefaultReloadInterval = time.Minute

// RotatingStripe is a Stripe verifier whose secrets live elsewhere (Secrets
// Manager) and may change while the function stays warm. When no signature
// matches, and the secrets were loaded at least ReloadInterval ago, it
// reloads them once and verifies again: a secret rolled in Secrets Manager
// takes effect on the next delivery signed with it, without a cold start,
// and a flood of bad signatures costs at most one load per interval.
// Safe for concurrent use.
type RotatingStripe struct {
	// Load returns the secrets currently accepted.
	Load func(ctx context.Context) ([]string, error)
	// ReloadInterval is the least time between two loads; default 1 min.
	ReloadInterval time.Duration
	// Tolerance and Now are as in Stripe.
	Tolerance time.Duration
	Now       func() time.Time

	mu       sync.Mutex
	current  *Stripe
	loadedAt time.Time
}

// Init loads the secrets for the first time; a function calls it at start,
// so a missing or empty secret stops the cold start with a clear error.
func (r *RotatingStripe) Init(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reload(ctx)
}

// Verify is Stripe.Verify, reloading the secrets once when no signature matches.
func (r *RotatingStripe) Verify(ctx context.Context, signatureHeader string, body []byte) (webhook.Event, error) {
	r.mu.Lock()
	s := r.current
	r.mu.Unlock()
	if s == nil {
		return webhook.Event{}, errors.New("stripe verifier: secrets not loaded")
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
	r.current = s
	return nil
}

func (r *RotatingStripe) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *RotatingStripe) interval() time.Duration {
	if r.ReloadInterval > 0 {
		return r.ReloadInterval
	}
	return DefaultReloadInterval
}

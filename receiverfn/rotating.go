package receiverfn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// rotatingVerifier is a verifier whose secrets live elsewhere (Secrets Manager)
// and may change while the function stays warm; it works for every
// provider, New building the provider's verifier from the secrets.
// Secrets decides when they are loaded again (see secrets.Rotating):
//
//   - when they are older than its MaxAge, before verifying: a secret
//     revoked in Secrets Manager stops verifying in warm functions within
//     MaxAge. If that load fails the old secrets are not used
//     (secrets.ErrStale), so a revoked secret cannot outlive MaxAge while
//     Secrets Manager is unreachable; the next load is tried after
//     MinInterval.
//   - when no signature matches, once, then it verifies again (Refresh,
//     at most one load per MinInterval): a secret rolled in Secrets
//     Manager takes effect on the next delivery signed with it, without a
//     cold start, and a flood of bad signatures costs at most one load per
//     interval. A failed load here keeps the old secrets.
//
// Safe for concurrent use.
type rotatingVerifier struct {
	// Secrets holds the secrets currently accepted.
	Secrets *secrets.Rotating
	// New builds the verifier from the secrets (the provider's Verifier,
	// bound to the function's environment); it reports a secret that
	// cannot be used.
	New func(secrets []string) (provider.Verifier, error)

	mu      sync.Mutex
	built   []string // the secrets current was built from
	current provider.Verifier
}

// Init loads the secrets for the first time and builds the verifier; a
// function calls it at start, so a missing, empty or unusable secret stops
// the cold start with a clear error.
func (r *rotatingVerifier) Init(ctx context.Context) error {
	if err := r.Secrets.Init(ctx); err != nil {
		return err
	}
	vals, err := r.Secrets.Values(ctx)
	if err != nil {
		return err
	}
	_, err = r.verifier(vals)
	return err
}

// Verify verifies with secrets at most MaxAge old, reloading them once
// when no signature matches.
func (r *rotatingVerifier) Verify(ctx context.Context, req webhook.Request) ([]webhook.Event, error) {
	used, err := r.Secrets.Values(ctx)
	if err != nil {
		return nil, fmt.Errorf("verifier: %w", err)
	}
	v, err := r.verifier(used)
	if err != nil {
		return nil, fmt.Errorf("verifier: %w: %w", secrets.ErrStale, err)
	}
	evs, err := v.Verify(ctx, req)
	if !errors.Is(err, provider.ErrBadSignature) {
		return evs, err
	}
	fresh, changed, rerr := r.Secrets.Refresh(ctx, used)
	if rerr != nil || !changed {
		return evs, err // keep the old secrets; a load error is not the caller's
	}
	if v, rerr = r.verifier(fresh); rerr != nil {
		return evs, err
	}
	return v.Verify(ctx, req)
}

// verifier returns the verifier of vals, built once per set of secrets.
func (r *rotatingVerifier) verifier(vals []string) (provider.Verifier, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != nil && slices.Equal(r.built, vals) {
		return r.current, nil
	}
	v, err := r.New(vals)
	if err != nil {
		return nil, err
	}
	r.built, r.current = vals, v
	return v, nil
}

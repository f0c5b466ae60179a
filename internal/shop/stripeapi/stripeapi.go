// Package stripeapi is Stripe's API through stripe-go, as the example
// shop's billing calls it: the secret key, kept fresh (Key), the HTTP
// client and stripe-go backend (HTTPClient, NewBackend) and one call with a
// refused key refreshed (WithKey). hookinbox's own Stripe calls (a lost
// payload, a thin event, the reconciler's list) are internal/providers/stripe's,
// without stripe-go.
//
// Only the shop links it: the functions without the shop (the receiver,
// dlq-replay, the reconciler) do not link stripe-go. Nothing here logs, and a key is never put in an error.
// Everything is safe for concurrent use.
package stripeapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/stripe/stripe-go/v76"

	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/provider"
)

// Key returns the Stripe secret key given inline (local runs), or the
// values of the Secrets Manager secret arn, loaded now and kept fresh while
// the function stays warm: loaded again when older than maxAge, and when a
// caller finds them refused, at most once per minInterval.
func Key(ctx context.Context, cfg aws.Config, inline []string, arn string, maxAge, minInterval time.Duration) (*secrets.Rotating, error) {
	load := func(context.Context) ([]string, error) { return inline, nil }
	if len(inline) == 0 {
		sm := secretsmanager.NewFromConfig(cfg)
		load = func(ctx context.Context) ([]string, error) { return secrets.List(ctx, sm, arn) }
	}
	r := &secrets.Rotating{Load: load, MaxAge: maxAge, MinInterval: minInterval}
	if err := r.Init(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// HTTPClient is the HTTP client of every Stripe API call: bounded well
// inside a function's timeout.
func HTTPClient() *http.Client { return &http.Client{Timeout: 20 * time.Second} }

// NewBackend returns the stripe-go backend for the Stripe API at apiURL
// (Stripe's own when empty; stripe-mock or a test server otherwise), over
// httpClient (stripe-go's default when nil), retrying a failed request
// retries times itself (0: the caller's queue retries), with stripe-go's
// logging and telemetry off.
func NewBackend(apiURL string, httpClient *http.Client, retries int64) stripe.Backend {
	cfg := &stripe.BackendConfig{
		HTTPClient:        httpClient,
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
		MaxNetworkRetries: stripe.Int64(retries),
		EnableTelemetry:   stripe.Bool(false),
	}
	if apiURL != "" {
		cfg.URL = stripe.String(apiURL)
	}
	return stripe.GetBackendWithConfig(stripe.APIBackend, cfg)
}

// WithKey runs call with the first of keys (read for every call, so a key
// reloaded from Secrets Manager reaches a warm function) and, when Stripe refuses it
// (Refused) and keys has a new one (Refresh: at most one load per
// interval), once more with the new key. A refusal never changed anything
// at Stripe, so the second call is safe.
func WithKey(ctx context.Context, keys provider.Secret, call func(key string) error) error {
	used, err := keys.Values(ctx)
	if err != nil {
		return fmt.Errorf("stripe api key: %w", err)
	}
	err = call(used[0])
	if !keyRefused(err) {
		return err
	}
	fresh, changed, rerr := keys.Refresh(ctx, used)
	switch {
	case rerr != nil:
		return fmt.Errorf("%w (reloading the key failed: %v)", err, rerr)
	case !changed:
		return err
	}
	return call(fresh[0])
}

// keyRefused reports whether Stripe refused the key: 401 (unknown, expired or
// rolled key) or 403 (a restricted key without the permission).
func keyRefused(err error) bool {
	return StatusCode(err) == http.StatusUnauthorized || StatusCode(err) == http.StatusForbidden
}

// StatusCode returns the HTTP status of Stripe's answer when err is one,
// or 0.
func StatusCode(err error) int {
	var se *stripe.Error
	if errors.As(err, &se) {
		return se.HTTPStatusCode
	}
	return 0
}

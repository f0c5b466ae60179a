// Package stripeapi is what the functions that call Stripe's API (the
// processor's billing, the reconciler's event list) share: the secret key,
// kept fresh, and the HTTP client. It lives apart from lambdafn so that
// functions that never call Stripe do not link it.
package stripeapi

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/hookinbox/hookinbox/internal/platform/secrets"
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

// Package stripeapi is what the functions that call Stripe's API (the
// processor's billing, the reconciler's event list) share: the secret key
// and the HTTP client. It lives apart from lambdafn so that functions that
// never call Stripe do not link it.
package stripeapi

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/hookinbox/hookinbox/internal/secrets"
)

// Key returns the Stripe secret key given inline (local runs) or held in
// the Secrets Manager secret arn: the first value of either.
func Key(ctx context.Context, cfg aws.Config, inline []string, arn string) (string, error) {
	keys, err := secrets.Resolve(ctx, secretsmanager.NewFromConfig(cfg), inline, arn)
	if err != nil {
		return "", err
	}
	return keys[0], nil
}

// HTTPClient is the HTTP client of every Stripe API call: bounded well
// inside a function's timeout.
func HTTPClient() *http.Client { return &http.Client{Timeout: 20 * time.Second} }

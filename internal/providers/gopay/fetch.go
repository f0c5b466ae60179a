package gopay

import (
	"context"
	"errors"
	"time"

	"github.com/hookinbox/hookinbox/provider"
)

// settings are GoPay's variables, read alike by the processor and the
// reconciler.
type settings struct {
	clientID string
	apiURL   string
	secret   provider.Secret
}

// readSettings reads GoPay's settings from env: off (ok false) unless
// GOPAY_CLIENT_SECRET or GOPAY_CLIENT_SECRET_ARN is set, and then
// GOPAY_CLIENT_ID is required.
func readSettings(ctx context.Context, env *provider.Env) (s settings, ok bool, err error) {
	if !env.HasSecret("GOPAY_CLIENT_SECRET") {
		return s, false, nil
	}
	r := env.Settings()
	s.clientID = r.String("GOPAY_CLIENT_ID", "")
	s.apiURL = r.String("GOPAY_API_URL", defaultURL)
	if s.clientID == "" {
		r.Problem("GoPay is enabled (GOPAY_CLIENT_SECRET or GOPAY_CLIENT_SECRET_ARN is set) but GOPAY_CLIENT_ID is empty")
	}
	if err := r.Err(); err != nil {
		return s, false, err
	}
	if s.secret, err = env.Secret(ctx, "GOPAY_CLIENT_SECRET"); err != nil {
		return s, false, err
	}
	return s, true, nil
}

// Processor implements provider.Provider: with GoPay enabled, every
// notification is fetched (GET /payments/payment/{id}), and every fetch
// records a payment that is not final yet, so the reconciler fetches it
// again until it is (watch).
func (Provider) Processor(ctx context.Context, env *provider.Env) (provider.Fetch, error) {
	s, ok, err := readSettings(ctx, env)
	if !ok {
		return provider.Fetch{}, err
	}
	watch := &watch{DB: env.DynamoDB, Table: env.Table, Now: env.Now}
	get := watch.Watching(payments(s.clientID, s.secret, s.apiURL, env.HTTPClient()))
	return provider.Fetch{
		Get: func(ctx context.Context, id string, _ []byte) ([]byte, error) { return get(ctx, id) },
	}, nil
}

// Reconciler implements provider.Provider: with GoPay enabled, the
// payments not final yet are fetched again, GOPAY_RECONCILE_BUDGET a run
// (default 50), for GOPAY_RECONCILE_MAX_AGE (default 168h).
func (Provider) Reconciler(ctx context.Context, env *provider.Env) (provider.Source, error) {
	r := env.Settings()
	budget := int(r.Int("GOPAY_RECONCILE_BUDGET", 50))
	maxAge := r.Duration("GOPAY_RECONCILE_MAX_AGE", 7*24*time.Hour)
	if maxAge > watchTTL {
		r.Problem("GOPAY_RECONCILE_MAX_AGE=%s is longer than the %s a watched payment is kept", maxAge, watchTTL)
	}
	if budget < 1 || budget > 1000 {
		r.Problem("GOPAY_RECONCILE_BUDGET=%d: want 1 to 1000 payments a run", budget)
	}
	s, ok, err := readSettings(ctx, env)
	if err := errors.Join(err, r.Err()); err != nil || !ok {
		return provider.Source{}, err
	}
	return provider.Source{Sweep: &sweeper{
		watch:  &watch{DB: env.DynamoDB, Table: env.Table, MaxAge: maxAge, Now: env.Now},
		Fetch:  payments(s.clientID, s.secret, s.apiURL, env.HTTPClient()),
		Budget: budget,
		Inbox:  env.Inbox,
	}}, nil
}

package processor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/stripe/stripe-go/v76"

	"github.com/hookinbox/hookinbox/webhook"
)

// stripeKeys is the part of secrets.Rotating the fetcher uses: the key is
// read for every call, and reloaded once when Stripe refuses it.
type stripeKeys interface {
	Values(ctx context.Context) ([]string, error)
	Refresh(ctx context.Context, used []string) (vals []string, changed bool, err error)
}

// StripeEvents returns the Fetcher of Stripe events: GET /v1/events/{id}
// through the Stripe API at apiURL (Stripe's own when empty) with the first
// of keys (a *secrets.Rotating; a refused key is reloaded and the call made
// once more), over httpClient (stripe-go's default when nil). It makes no
// retries of its own (the queue retries) and logs nothing. The event comes back as
// the bytes the API returned, which is the object a webhook delivers; it
// is authentic for the same reason the reconciler's list is: fetched from
// Stripe over TLS with our own secret key. An event Stripe does not know
// (404) is a permanent error; anything else is left transient.
func StripeEvents(keys stripeKeys, apiURL string, httpClient *http.Client) Fetcher {
	cfg := &stripe.BackendConfig{
		HTTPClient:        httpClient,
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
		MaxNetworkRetries: stripe.Int64(0),
		EnableTelemetry:   stripe.Bool(false),
	}
	if apiURL != "" {
		cfg.URL = stripe.String(apiURL)
	}
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, cfg)
	return func(ctx context.Context, eventID string) ([]byte, error) {
		var ev fetchedEvent
		get := func(key string) error {
			ev = fetchedEvent{}
			return backend.Call(http.MethodGet, "/v1/events/"+url.PathEscape(eventID), key, &stripe.Params{Context: ctx}, &ev)
		}
		used, err := keys.Values(ctx)
		if err != nil {
			return nil, fmt.Errorf("get stripe event %s: api key: %w", eventID, err)
		}
		err = get(used[0])
		var se *stripe.Error
		if errors.As(err, &se) && (se.HTTPStatusCode == http.StatusUnauthorized || se.HTTPStatusCode == http.StatusForbidden) {
			if fresh, changed, rerr := keys.Refresh(ctx, used); rerr == nil && changed {
				err = get(fresh[0])
			}
		}
		switch {
		case errors.As(err, &se) && se.HTTPStatusCode == http.StatusNotFound:
			return nil, webhook.Permanent(fmt.Errorf("stripe has no event %s: %w", eventID, err))
		case err != nil:
			return nil, fmt.Errorf("get stripe event %s: %w", eventID, err)
		case ev.LastResponse == nil || ev.ID != eventID || ev.Object != "event":
			return nil, fmt.Errorf("get stripe event %s: the API answered %q %q, not that event", eventID, ev.Object, ev.ID)
		}
		return ev.LastResponse.RawJSON, nil
	}
}

// fetchedEvent is the head of GET /v1/events/{id}'s answer; the whole
// answer is in LastResponse.RawJSON.
type fetchedEvent struct {
	stripe.APIResource
	ID     string `json:"id"`
	Object string `json:"object"`
}

package stripeapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/stripe/stripe-go/v76"

	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/webhook"
)

// FetchEvent returns the processor's fetcher of Stripe events (a
// processor.Fetcher) through the Stripe API at apiURL (Stripe's own when
// empty) with the first of keys (a refused key is reloaded and the call
// made once more, WithKey), over httpClient (stripe-go's default when
// nil). It makes no retries of its own (the queue retries, with backoff).
//
// For a lost payload (stored nil, or anything but a thin notification) it
// returns GET /v1/events/{id}: the bytes the API returned, which is the
// object a webhook delivers. For a stored thin notification (IsThin) it
// returns the snapshot-shaped view FetchThin builds from the v2 event and
// its related object. What it fetches is authentic for the same reason
// the reconciler's list is: fetched from Stripe over TLS with our own
// secret key. An event or object Stripe does not know (404) is a
// permanent error naming it; anything else is left transient.
func FetchEvent(keys *secrets.Rotating, apiURL string, httpClient *http.Client) func(ctx context.Context, eventID string, stored []byte) ([]byte, error) {
	backend := NewBackend(apiURL, httpClient, 0)
	return func(ctx context.Context, eventID string, stored []byte) ([]byte, error) {
		if IsThin(stored) {
			return fetchThin(ctx, backend, keys, eventID, stored)
		}
		var ev fetchedEvent
		err := WithKey(ctx, keys, func(key string) error {
			ev = fetchedEvent{}
			return backend.Call(http.MethodGet, "/v1/events/"+url.PathEscape(eventID), key, &stripe.Params{Context: ctx}, &ev)
		})
		switch {
		case StatusCode(err) == http.StatusNotFound:
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

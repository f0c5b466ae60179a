package stripe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// fetchEvent returns the processor's fetch of Stripe events through the
// Stripe API at apiURL (Stripe's own when empty) with the first of key's
// values (a refused key is reloaded and the call made once more), over
// httpClient. It makes no retries of its own (the queue retries, with
// backoff).
//
// For a lost payload (stored nil, or anything but a thin notification) it
// returns GET /v1/events/{id}: the bytes the API returned, which is the
// object a webhook delivers. For a stored thin notification (isThin) it
// returns the snapshot-shaped view fetchThin builds from the v2 event and
// its related object. What it fetches is authentic for the same reason
// the reconciler's list is: fetched from Stripe over TLS with our own
// secret key. An event or object Stripe does not know (404) is a
// permanent error naming it; anything else is left transient.
func fetchEvent(key provider.Secret, apiURL string, httpClient *http.Client) func(ctx context.Context, eventID string, stored []byte) ([]byte, error) {
	a := newAPI(key, apiURL, httpClient, 0)
	return func(ctx context.Context, eventID string, stored []byte) ([]byte, error) {
		if isThin(stored) {
			return a.fetchThin(ctx, eventID, stored)
		}
		body, err := a.get(ctx, "/v1/events/"+url.PathEscape(eventID), nil)
		var ev struct{ ID, Object string }
		switch {
		case statusOf(err) == http.StatusNotFound:
			return nil, webhook.Permanent(fmt.Errorf("stripe has no event %s: %w", eventID, err))
		case err != nil:
			return nil, fmt.Errorf("get stripe event %s: %w", eventID, err)
		case json.Unmarshal(body, &ev) != nil || ev.ID != eventID || ev.Object != "event":
			return nil, fmt.Errorf("get stripe event %s: the API answered %q %q, not that event", eventID, ev.Object, ev.ID)
		}
		return body, nil
	}
}

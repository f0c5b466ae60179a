package processor

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/hookinbox/hookinbox/internal/gopayapi"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
)

// DefaultGoPayAPIURL is GoPay's production API base URL.
const DefaultGoPayAPIURL = gopayapi.DefaultURL

// GoPayPayments returns the Fetcher of GoPay payments (gopayapi.Payments):
// the only source of a GoPay payment's state, its notification being an
// unsigned id.
func GoPayPayments(clientID string, secret *secrets.Rotating, apiURL string, httpClient *http.Client) Fetcher {
	return GoPayFetcher(gopayapi.Payments(clientID, secret, apiURL, httpClient))
}

// GoPayFetcher returns the Fetcher of GoPay payments that get fetches by
// id (gopayapi.Payments, or a wrapper of it), whatever the stored
// notification holds. A payment GoPay does not know (gopayapi.ErrNotFound)
// is ErrNotFoundAtProvider, so a notification with a made-up id ends
// IGNORED rather than parked and alarmed (see Config.NotFoundTries).
func GoPayFetcher(get func(ctx context.Context, id string) ([]byte, error)) Fetcher {
	return func(ctx context.Context, id string, _ []byte) ([]byte, error) {
		raw, err := get(ctx, id)
		if errors.Is(err, gopayapi.ErrNotFound) {
			return nil, fmt.Errorf("%w: %w", err, ErrNotFoundAtProvider)
		}
		return raw, err
	}
}

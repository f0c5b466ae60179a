package processor

import (
	"context"
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
	return FetchByID(gopayapi.Payments(clientID, secret, apiURL, httpClient))
}

// FetchByID returns a Fetcher that fetches an event by its id alone, with
// get, whatever the stored notification holds.
func FetchByID(get func(ctx context.Context, id string) ([]byte, error)) Fetcher {
	return func(ctx context.Context, id string, _ []byte) ([]byte, error) { return get(ctx, id) }
}

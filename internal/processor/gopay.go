package processor

import (
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
	return gopayapi.Payments(clientID, secret, apiURL, httpClient)
}

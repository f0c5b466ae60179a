package mollie

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// defaultAPIURL is Mollie's API base URL.
const defaultAPIURL = "https://api.mollie.com"

// errNotFound is the error of a payment Mollie does not know (404): anyone
// can make up an id of the right shape. It wraps provider.ErrNotFound, so
// the processor ends such a notification IGNORED, never parked.
var errNotFound = fmt.Errorf("mollie has no such payment: %w", provider.ErrNotFound)

// payments returns the fetch of Mollie payments, the only source of a
// payment's state: GET {apiURL}/v2/payments/{id} with the API key as a
// bearer token, through provider.Client (a refused key reloaded once, a
// 429 waited out). A payment Mollie does not know wraps provider.ErrNotFound; every
// other failure is transient. The answer is checked to be that payment,
// with a status. It makes no retries of its own and logs nothing.
func payments(apiKey provider.Secret, apiURL string, httpClient *http.Client) func(ctx context.Context, id string) ([]byte, error) {
	if apiURL == "" {
		apiURL = defaultAPIURL
	}
	base := strings.TrimSuffix(apiURL, "/")
	api := &provider.Client{Secret: apiKey, HTTP: httpClient, Refused: refused}
	return func(ctx context.Context, id string) ([]byte, error) {
		if err := checkID(id); err != nil {
			return nil, webhook.Permanent(err)
		}
		resp, err := api.Do(ctx, func(ctx context.Context) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v2/payments/"+id, nil)
			if err == nil {
				req.Header.Set("Accept", "application/hal+json")
			}
			return req, err
		})
		switch {
		case err != nil:
			return nil, fmt.Errorf("get mollie payment %s: %w", id, err)
		case resp.Status == http.StatusNotFound:
			return nil, fmt.Errorf("get mollie payment %s: %w", id, errNotFound)
		case resp.Status != http.StatusOK:
			return nil, fmt.Errorf("get mollie payment %s: HTTP %d", id, resp.Status)
		}
		var head struct {
			Resource string `json:"resource"`
			ID       string `json:"id"`
			Status   string `json:"status"`
		}
		if err := json.Unmarshal(resp.Body, &head); err != nil || head.Resource != "payment" || head.ID != id || head.Status == "" {
			return nil, fmt.Errorf("get mollie payment %s: the API answered something else than that payment with a status", id)
		}
		return resp.Body, nil
	}
}

// refused reports Mollie refusing the API key.
func refused(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

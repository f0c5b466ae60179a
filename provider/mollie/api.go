package mollie

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// DefaultAPIURL is Mollie's API base URL.
const DefaultAPIURL = "https://api.mollie.com"

// ErrNotFound is the error of a payment Mollie does not know (404): anyone
// can make up an id of the right shape. It wraps provider.ErrNotFound, so
// the processor ends such a notification IGNORED, never parked.
var ErrNotFound = fmt.Errorf("mollie has no such payment: %w", provider.ErrNotFound)

// errRefused is a 401 or 403 from Mollie.
var errRefused = errors.New("mollie refused the API key")

// Payments returns the fetch of Mollie payments, the only source of a
// payment's state: GET {apiURL}/v2/payments/{id} with the API key as a
// bearer token. A refused key is reloaded once (Secrets Manager) and the
// fetch tried again. A payment Mollie does not know is ErrNotFound; every
// other failure is transient. The answer is checked to be that payment,
// with a status. It makes no retries of its own and logs nothing.
func Payments(apiKey provider.Secret, apiURL string, httpClient *http.Client) func(ctx context.Context, id string) ([]byte, error) {
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 20 * time.Second}
	}
	c := &client{key: apiKey, base: strings.TrimSuffix(apiURL, "/"), http: httpClient}
	return c.payment
}

type client struct {
	key  provider.Secret
	base string
	http *http.Client
}

func (c *client) payment(ctx context.Context, id string) ([]byte, error) {
	if err := CheckID(id); err != nil {
		return nil, webhook.Permanent(err)
	}
	keys, err := c.key.Values(ctx)
	if err != nil {
		return nil, fmt.Errorf("get mollie payment %s: API key: %w", id, err)
	}
	body, err := c.get(ctx, id, keys[0])
	if errors.Is(err, errRefused) {
		if fresh, changed, rerr := c.key.Refresh(ctx, keys); rerr == nil && changed {
			body, err = c.get(ctx, id, fresh[0])
		}
	}
	if err != nil {
		return nil, fmt.Errorf("get mollie payment %s: %w", id, err)
	}
	var head struct {
		Resource string `json:"resource"`
		ID       string `json:"id"`
		Status   string `json:"status"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.Resource != "payment" || head.ID != id || head.Status == "" {
		return nil, fmt.Errorf("get mollie payment %s: the API answered something else than that payment with a status", id)
	}
	return body, nil
}

// get fetches the payment with key.
func (c *client) get(ctx context.Context, id, key string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v2/payments/"+id, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/hal+json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case err != nil:
		return nil, err
	case resp.StatusCode == http.StatusOK:
		return body, nil
	case resp.StatusCode == http.StatusNotFound:
		return nil, ErrNotFound
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("HTTP %d: %w", resp.StatusCode, errRefused)
	}
	return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
}

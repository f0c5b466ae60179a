// Package gopayapi fetches GoPay payments from GoPay's REST API: the
// processor's source of a GoPay payment's state (its notification is an
// unsigned id), and the reconciler's, which fetches again the payments
// that were not final.
package gopayapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/webhook"
)

// DefaultURL is GoPay's production API base URL.
const DefaultURL = "https://gate.gopay.cz/api"

// ErrNotFound is the error of a payment GoPay does not know (404).
var ErrNotFound = errors.New("gopay has no such payment")

// Payments returns the fetch of GoPay payments, the only source of
// a GoPay payment's state (its notification is an unsigned id): an OAuth2
// token from POST {apiURL}/oauth2/token (client credentials, scope
// payment-all), kept until shortly before it expires, then
// GET {apiURL}/payments/payment/{id}. A refused token or secret is
// replaced once (a new token, the secret reloaded from Secrets Manager).
// A payment GoPay does not know (404) is ErrNotFound; other failures
// are transient. It makes no retries of its own
// and logs nothing. The answer is checked to be that payment, with a state.
func Payments(clientID string, secret *secrets.Rotating, apiURL string, httpClient *http.Client) func(ctx context.Context, id string) ([]byte, error) {
	if apiURL == "" {
		apiURL = DefaultURL
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: 20 * time.Second}
	}
	c := &gopayClient{id: clientID, secret: secret, base: strings.TrimSuffix(apiURL, "/"), http: httpClient}
	return c.payment
}

type gopayClient struct {
	id     string
	secret *secrets.Rotating
	base   string
	http   *http.Client

	mu      sync.Mutex
	token   string
	expires time.Time
}

// errGoPayRefused is a 401/403 from GoPay.
var errGoPayRefused = errors.New("gopay refused the credentials")

func (c *gopayClient) payment(ctx context.Context, id string) ([]byte, error) {
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		return nil, webhook.Permanent(fmt.Errorf("gopay payment id %q is not a number", id))
	}
	body, err := c.get(ctx, id, false)
	if errors.Is(err, errGoPayRefused) {
		body, err = c.get(ctx, id, true)
	}
	if err != nil {
		return nil, fmt.Errorf("get gopay payment %s: %w", id, err)
	}
	var head struct {
		ID    json.Number `json:"id"`
		State string      `json:"state"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.ID.String() != id || head.State == "" {
		return nil, fmt.Errorf("get gopay payment %s: the API answered something else than that payment with a state", id)
	}
	return body, nil
}

// get fetches the payment with the cached token, or a new one when fresh
// is set or there is none.
func (c *gopayClient) get(ctx context.Context, id string, fresh bool) ([]byte, error) {
	tok, err := c.accessToken(ctx, fresh)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/payments/payment/"+url.PathEscape(id), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	status, body, err := c.do(req)
	switch {
	case err != nil:
		return nil, err
	case status == http.StatusOK:
		return body, nil
	case status == http.StatusNotFound:
		return nil, ErrNotFound
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return nil, fmt.Errorf("payment: HTTP %d: %w", status, errGoPayRefused)
	}
	return nil, fmt.Errorf("payment: HTTP %d", status)
}

// accessToken returns a token valid for at least another minute.
func (c *gopayClient) accessToken(ctx context.Context, fresh bool) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !fresh && c.token != "" && time.Until(c.expires) > time.Minute {
		return c.token, nil
	}
	used, err := c.secret.Values(ctx)
	if err != nil {
		return "", fmt.Errorf("client secret: %w", err)
	}
	tok, ttl, err := c.requestToken(ctx, used[0])
	if errors.Is(err, errGoPayRefused) {
		if vals, changed, rerr := c.secret.Refresh(ctx, used); rerr == nil && changed {
			tok, ttl, err = c.requestToken(ctx, vals[0])
		}
	}
	if err != nil {
		return "", err
	}
	c.token, c.expires = tok, time.Now().Add(ttl)
	return tok, nil
}

func (c *gopayClient) requestToken(ctx context.Context, secret string) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"payment-all"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/oauth2/token", strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, err
	}
	req.SetBasicAuth(c.id, secret)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	status, body, err := c.do(req)
	switch {
	case err != nil:
		return "", 0, err
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "", 0, fmt.Errorf("token: HTTP %d: %w", status, errGoPayRefused)
	case status != http.StatusOK:
		return "", 0, fmt.Errorf("token: HTTP %d", status)
	}
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &t); err != nil || t.AccessToken == "" {
		return "", 0, errors.New("token: the answer has no access_token")
	}
	return t.AccessToken, time.Duration(t.ExpiresIn) * time.Second, nil
}

// do sends req and reads at most 1 MiB of the answer.
func (c *gopayClient) do(req *http.Request) (int, []byte, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, body, nil
}

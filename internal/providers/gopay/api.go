package gopay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// defaultURL is GoPay's production API base URL.
const defaultURL = "https://gate.gopay.cz/api"

// errNotFound is the error of a payment GoPay does not know (404).
var errNotFound = fmt.Errorf("gopay has no such payment: %w", provider.ErrNotFound)

// payments returns the fetch of GoPay payments, the only source of a
// GoPay payment's state (its notification is an unsigned id): an OAuth2
// token from POST {apiURL}/oauth2/token (client credentials, scope
// payment-all), kept until shortly before it expires, then
// GET {apiURL}/payments/payment/{id}. A refused token or secret is
// replaced once (a new token, the secret reloaded from Secrets Manager).
// A payment GoPay does not know (404) wraps provider.ErrNotFound; other
// failures are transient. It makes no retries of its own and logs
// nothing. The answer is checked to be that payment, with a state.
func payments(clientID string, secret provider.Secret, apiURL string, httpClient *http.Client) func(ctx context.Context, id string) ([]byte, error) {
	if apiURL == "" {
		apiURL = defaultURL
	}
	base := strings.TrimSuffix(apiURL, "/")
	tokens := &tokenSource{
		api:  &provider.Client{Secret: secret, HTTP: httpClient, Refused: refused, Auth: func(req *http.Request, s string) { req.SetBasicAuth(clientID, s) }},
		base: base,
	}
	api := &provider.Client{Secret: tokens, HTTP: httpClient, Refused: refused}
	return func(ctx context.Context, id string) ([]byte, error) {
		if _, err := strconv.ParseInt(id, 10, 64); err != nil {
			return nil, webhook.Permanent(fmt.Errorf("gopay payment id %q is not a number", id))
		}
		resp, err := api.Do(ctx, func(ctx context.Context) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/payments/payment/"+url.PathEscape(id), nil)
			if err == nil {
				req.Header.Set("Accept", "application/json")
			}
			return req, err
		})
		switch {
		case err != nil:
			return nil, fmt.Errorf("get gopay payment %s: %w", id, err)
		case resp.Status == http.StatusNotFound:
			return nil, fmt.Errorf("get gopay payment %s: %w", id, errNotFound)
		case resp.Status != http.StatusOK:
			return nil, fmt.Errorf("get gopay payment %s: payment: HTTP %d", id, resp.Status)
		}
		var head struct {
			ID    json.Number `json:"id"`
			State string      `json:"state"`
		}
		if err := json.Unmarshal(resp.Body, &head); err != nil || head.ID.String() != id || head.State == "" {
			return nil, fmt.Errorf("get gopay payment %s: the API answered something else than that payment with a state", id)
		}
		return resp.Body, nil
	}
}

// refused reports GoPay refusing a token or the client credentials.
func refused(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// tokenSource is the OAuth2 access token as a provider.Secret: Values
// returns the token, requested with the client credentials when there is
// none or it expires within a minute; Refresh, called when GoPay refused
// it, requests a new one.
type tokenSource struct {
	api  *provider.Client // the token endpoint, with the client secret
	base string

	mu      sync.Mutex
	token   string
	expires time.Time
}

func (t *tokenSource) Values(ctx context.Context) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && time.Until(t.expires) > time.Minute {
		return []string{t.token}, nil
	}
	return t.request(ctx)
}

func (t *tokenSource) Refresh(ctx context.Context, used []string) ([]string, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.token != "" && t.token != used[0] {
		return []string{t.token}, true, nil
	}
	vals, err := t.request(ctx)
	return vals, err == nil, err
}

// request gets a new token; t.mu is held.
func (t *tokenSource) request(ctx context.Context) ([]string, error) {
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"payment-all"}}.Encode()
	resp, err := t.api.Do(ctx, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/oauth2/token", strings.NewReader(form))
		if err == nil {
			req.Header.Set("Accept", "application/json")
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		return req, err
	})
	switch {
	case err != nil:
		return nil, err
	case resp.Status != http.StatusOK:
		return nil, fmt.Errorf("token: HTTP %d", resp.Status)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(resp.Body, &tok); err != nil || tok.AccessToken == "" {
		return nil, errors.New("token: the answer has no access_token")
	}
	t.token, t.expires = tok.AccessToken, time.Now().Add(time.Duration(tok.ExpiresIn)*time.Second)
	return []string{t.token}, nil
}

package stripe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
)

// defaultAPIURL is Stripe's API base URL, the default of STRIPE_API_URL.
const defaultAPIURL = "https://api.stripe.com"

// apiVersion is the Stripe-Version of the API v1 calls: stripe-go v76's
// (stripe.APIVersion), so the business decodes what is fetched with the
// stripe-go structs it uses. The functions call Stripe without stripe-go,
// so the receiver, which links this package, does not link it.
const apiVersion = "2023-10-16"

// v2Version is the Stripe-Version sent with the API v2 calls a thin event
// needs: GET /v2/core/events/{id} and the GET of a related object of an
// API v2 resource (/v2/...).
const v2Version = "2025-09-30.clover"

// api is Stripe's API with a secret key, read for every call (a key
// rolled in Secrets Manager reaches a warm function within its maximum
// age, and a refused key, 401 or 403, is reloaded once).
type api struct {
	client *provider.Client
	base   string
}

// newAPI returns the API at apiURL (Stripe's when empty) with key over
// httpClient, a request failed in transit or answered 5xx sent again
// retries times; with retries 0 a rate limit is not waited out either
// (the caller's queue retries, with backoff).
func newAPI(key provider.Secret, apiURL string, httpClient *http.Client, retries int) *api {
	c := &provider.Client{Secret: key, HTTP: httpClient, Retries: retries,
		Refused: func(status int) bool { return status == http.StatusUnauthorized || status == http.StatusForbidden }}
	if retries == 0 {
		c.RetryAfter = func(int, http.Header) (time.Duration, bool) { return 0, false }
	}
	if apiURL == "" {
		apiURL = defaultAPIURL
	}
	return &api{client: c, base: strings.TrimSuffix(apiURL, "/")}
}

// statusError is an answer other than 200.
type statusError struct {
	status  int
	message string
}

func (e *statusError) Error() string {
	if e.message == "" {
		return fmt.Sprintf("HTTP %d", e.status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.status, e.message)
}

// statusOf returns the HTTP status of an answer's error, or 0.
func statusOf(err error) int {
	if se, ok := err.(*statusError); ok {
		return se.status
	}
	return 0
}

// get GETs path (with its query) with the headers h and returns the body
// of a 200 answer; any other answer is a *statusError with Stripe's
// message.
func (a *api) get(ctx context.Context, path string, h http.Header) ([]byte, error) {
	resp, err := a.client.Do(ctx, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.base+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Stripe-Version", apiVersion)
		for k, v := range h {
			req.Header[k] = v
		}
		return req, nil
	})
	if err != nil {
		return nil, err
	}
	if resp.Status != http.StatusOK {
		var e struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(resp.Body, &e)
		return nil, &statusError{status: resp.Status, message: e.Error.Message}
	}
	return resp.Body, nil
}

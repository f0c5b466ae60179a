package provider

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Client calls a provider's HTTP API with a secret, as every provider's
// fetch and reconcile source does: it authenticates each request with
// the secret's current value (Auth); when the answer refuses it
// (Refused), it has the secret reloaded (Secret.Refresh) and, when that
// gives a new value, tries once more; when the answer asks to wait
// (RetryAfter: a 429's Retry-After), it waits, if that ends before the
// context's deadline less Margin, and tries again, at most MaxWaits
// times. Safe for concurrent use.
type Client struct {
	// Secret is the credential (an API key, a token).
	Secret Secret
	// Auth sets req's credentials from the secret's value; nil sends it
	// as "Authorization: Bearer <value>".
	Auth func(req *http.Request, secret string)
	// HTTP sends the requests; nil: a client with a 20 s timeout.
	HTTP *http.Client
	// Refused reports an answer that refuses the credentials; nil: 401.
	Refused func(status int) bool
	// RetryAfter returns how long an answer asks to wait before the
	// request is sent again, and whether it asks at all; nil: a 429,
	// after its Retry-After seconds (at least one).
	RetryAfter func(status int, h http.Header) (time.Duration, bool)
	// MaxWaits is how many times one call waits (RetryAfter); default 3.
	MaxWaits int
	// Retries is how many times a request that failed in transit or was
	// answered 5xx is sent again, after 0.5 s, 1 s, 2 s, ...; default 0
	// (the caller's queue retries).
	Retries int
	// Margin is how much of the context's deadline a wait leaves;
	// default 15 s.
	Margin time.Duration
	// Sleep waits d or until ctx ends; nil: a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Response is an answer as the Client read it: at most 8 MiB of body.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends the request newRequest builds (once per attempt) and returns
// the last answer, whatever its status, or an error when none came, the
// secret cannot be read, or a wait would pass the deadline.
func (c *Client) Do(ctx context.Context, newRequest func(ctx context.Context) (*http.Request, error)) (Response, error) {
	refreshed, waits, retries := false, 0, 0
	for {
		vals, err := c.Secret.Values(ctx)
		if err != nil {
			return Response{}, fmt.Errorf("credentials: %w", err)
		}
		resp, err := c.send(ctx, newRequest, vals[0])
		transient := err != nil || resp.Status >= 500
		switch {
		case transient && retries < c.Retries:
			if werr := Pause(ctx, 500*time.Millisecond<<retries, c.Margin, c.Sleep, "retrying"); werr != nil {
				return resp, cmp.Or(err, werr)
			}
			retries++
			continue
		case err != nil:
			return resp, err
		case c.refused(resp.Status) && !refreshed:
			refreshed = true
			_, changed, err := c.Secret.Refresh(ctx, vals)
			if err != nil {
				return resp, fmt.Errorf("reloading the refused credentials: %w", err)
			}
			if changed {
				continue
			}
			return resp, nil
		}
		wait, asked := c.retryAfter(resp.Status, resp.Header)
		if !asked || waits >= cmp.Or(c.MaxWaits, 3) {
			return resp, nil
		}
		if err := Pause(ctx, wait, c.Margin, c.Sleep, "rate limited"); err != nil {
			return resp, err
		}
		waits++
	}
}

// send sends one request with the secret value and reads the answer.
func (c *Client) send(ctx context.Context, newRequest func(context.Context) (*http.Request, error), secret string) (Response, error) {
	req, err := newRequest(ctx)
	if err != nil {
		return Response{}, err
	}
	if c.Auth != nil {
		c.Auth(req, secret)
	} else {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	client := c.HTTP
	if client == nil {
		client = &http.Client{Timeout: 20 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return Response{}, err
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

func (c *Client) refused(status int) bool {
	if c.Refused != nil {
		return c.Refused(status)
	}
	return status == http.StatusUnauthorized
}

func (c *Client) retryAfter(status int, h http.Header) (time.Duration, bool) {
	if c.RetryAfter != nil {
		return c.RetryAfter(status, h)
	}
	if status != http.StatusTooManyRequests {
		return 0, false
	}
	d, _ := RetryAfter(h.Get("Retry-After"), time.Now())
	return max(d, time.Second), true
}

// RetryAfter reads a Retry-After header's value: delay-seconds (digits
// only) or an HTTP date, as a wait from now. False when it is missing or
// bad; a date already past is a zero wait; a wait longer than a
// time.Duration holds (about 292 years) is read as the longest one, never
// as an overflow.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v != "" && strings.Trim(v, "0123456789") == "" {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(math.MaxInt64/time.Second) {
			return math.MaxInt64, true // only digits: out of range
		}
		return time.Duration(secs) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// Pause waits d, when that ends before ctx's deadline less margin
// (default 15 s); otherwise it fails at once, saying why (a rate limit, a
// throttle), so the next run goes on. sleep, when set, replaces the
// timer.
func Pause(ctx context.Context, d, margin time.Duration, sleep func(context.Context, time.Duration) error, why string) error {
	if d <= 0 {
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && time.Now().Add(d).After(dl.Add(-cmp.Or(margin, 15*time.Second))) {
		return fmt.Errorf("%s for another %s, past this run's deadline: the next run goes on", why, d.Round(time.Second))
	}
	if sleep != nil {
		return sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

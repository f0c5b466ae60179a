package github

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// defaultAPIURL is GitHub's REST API.
const defaultAPIURL = "https://api.github.com"

// deliveries lists what GitHub's webhook deliveries lost. GitHub
// never redelivers a failed delivery by itself; it keeps a hook's
// deliveries for three days. For each hook (an API path such as
// repos/<owner>/<repo>/hooks/<id> or orgs/<org>/hooks/<id>), Next pages
// through GET {hook}/deliveries, newest first, following the Link
// header's rel="next" cursor, down to the window's start, and returns,
// oldest first, every delivery in the window whose GUID has no claim
// (github#<GUID>, the receiver's key), read from its own record
// (GET {hook}/deliveries/{id}: the request's headers and payload). A
// delivery whose GUID is claimed is not fetched.
//
// The reconciler claims those records through the intake instead of
// asking GitHub to redeliver (POST …/attempts): a redelivery goes to the
// same endpoint that failed, which may still be down, and only within
// three days, while the record needs nothing but the API; and the API
// call, authenticated with the token over TLS, vouches for the payload as
// the signature does for a webhook.
//
// Rate limits are respected: when X-RateLimit-Remaining reaches 0 the
// next call waits for X-RateLimit-Reset, and a 403 or 429 is retried after
// its Retry-After (or the reset time), each only when the wait ends
// before the context's deadline less Margin; otherwise Next fails and the
// next run goes on from the checkpoint. GitHub App hooks
// (/app/hook/deliveries, with a JWT from the App's private key) are not
// supported yet. Safe for concurrent use.
type deliveries struct {
	Hooks   []string
	Token   provider.Secret
	BaseURL string // defaultAPIURL when empty
	HTTP    *http.Client
	// Inbox is where a delivery's claim is looked up.
	Inbox provider.Inbox
	// Margin is how much of the deadline a rate-limit wait leaves;
	// default 15 s.
	Margin time.Duration
	// Sleep waits d or until ctx ends; default a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error

	mu      sync.Mutex
	resetAt time.Time // the limit is spent until then
}

// gitHubDelivery is one entry of a hook's delivery list.
type gitHubDelivery struct {
	ID          int64     `json:"id"`
	GUID        string    `json:"guid"`
	DeliveredAt time.Time `json:"delivered_at"`
	Event       string    `json:"event"`
	StatusCode  int       `json:"status_code"`
}

// Next implements provider.Lister: the deliveries of every hook in [from, to)
// whose GUID has no claim, oldest first, as events; upTo is to.
func (g *deliveries) Next(ctx context.Context, from, to time.Time) ([]webhook.Event, time.Time, error) {
	var evs []webhook.Event
	for _, hook := range g.Hooks {
		hook = strings.Trim(hook, "/")
		listed, err := g.list(ctx, hook, from, to)
		if err != nil {
			return nil, from, fmt.Errorf("list deliveries of %s: %w", hook, err)
		}
		for _, d := range listed {
			claimed, err := g.Inbox.Claimed(ctx, webhook.NewKey(Name, d.GUID))
			if err != nil {
				return nil, from, err
			}
			if claimed {
				continue // it arrived
			}
			ev, err := g.record(ctx, hook, d)
			if err != nil {
				return nil, from, fmt.Errorf("get delivery %d of %s: %w", d.ID, hook, err)
			}
			evs = append(evs, ev)
		}
	}
	slices.SortStableFunc(evs, func(a, b webhook.Event) int { return a.Created.Compare(b.Created) })
	return evs, to, nil
}

// list returns the deliveries of hook in [from, to), one per GUID (the
// first attempt: a redelivery keeps the GUID).
func (g *deliveries) list(ctx context.Context, hook string, from, to time.Time) ([]gitHubDelivery, error) {
	byGUID := map[string]gitHubDelivery{}
	next := g.base() + "/" + hook + "/deliveries?per_page=100"
	for next != "" {
		var page []gitHubDelivery
		h, err := g.get(ctx, next, &page)
		if err != nil {
			return nil, err
		}
		next = nextLink(h.Get("Link"))
		for _, d := range page {
			if d.DeliveredAt.Before(from) {
				next = "" // newest first: the rest is older still
				continue
			}
			if !d.DeliveredAt.Before(to) {
				continue
			}
			if err := webhook.ValidateEventID(d.GUID); err != nil {
				return nil, fmt.Errorf("delivery %d: guid: %w", d.ID, err)
			}
			if old, ok := byGUID[d.GUID]; !ok || d.DeliveredAt.Before(old.DeliveredAt) {
				byGUID[d.GUID] = d
			}
		}
	}
	out := make([]gitHubDelivery, 0, len(byGUID))
	for _, d := range byGUID {
		out = append(out, d)
	}
	return out, nil
}

// record reads one delivery's request and returns it as the event the
// receiver would have claimed.
func (g *deliveries) record(ctx context.Context, hook string, d gitHubDelivery) (webhook.Event, error) {
	var rec struct {
		GUID    string `json:"guid"`
		Event   string `json:"event"`
		Request struct {
			Headers map[string]string `json:"headers"`
			Payload json.RawMessage   `json:"payload"`
		} `json:"request"`
	}
	if _, err := g.get(ctx, g.base()+"/"+hook+"/deliveries/"+strconv.FormatInt(d.ID, 10), &rec); err != nil {
		return webhook.Event{}, err
	}
	if rec.GUID != d.GUID {
		return webhook.Event{}, fmt.Errorf("the record is of delivery %q, listed as %q", rec.GUID, d.GUID)
	}
	if len(rec.Request.Payload) == 0 || rec.Request.Payload[0] != '{' {
		return webhook.Event{}, errors.New("the record has no JSON object payload")
	}
	typ := cmp.Or(headerValue(rec.Request.Headers, "X-GitHub-Event"), rec.Event, d.Event)
	if typ == "" {
		return webhook.Event{}, errors.New("the record names no event")
	}
	return webhook.Event{Provider: Name, ID: d.GUID, Type: typ, Created: d.DeliveredAt.UTC(), Raw: rec.Request.Payload}, nil
}

func (g *deliveries) base() string {
	return strings.TrimSuffix(cmp.Or(g.BaseURL, defaultAPIURL), "/")
}

// get GETs url into v, waiting out rate limits within the deadline, and
// returns the answer's headers. A refused token (401) is reloaded once.
func (g *deliveries) get(ctx context.Context, url string, v any) (http.Header, error) {
	g.mu.Lock()
	spent := time.Until(g.resetAt)
	g.mu.Unlock()
	if err := provider.Pause(ctx, spent, g.Margin, g.Sleep, "rate limited"); err != nil {
		return nil, err
	}
	api := &provider.Client{Secret: g.Token, HTTP: g.HTTP, Margin: g.Margin, Sleep: g.Sleep,
		RetryAfter: func(status int, h http.Header) (time.Duration, bool) {
			if status != http.StatusForbidden && status != http.StatusTooManyRequests {
				return 0, false
			}
			return retryAfter(h)
		}}
	resp, err := api.Do(ctx, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err == nil {
			req.Header.Set("Accept", "application/vnd.github+json")
			req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
		}
		return req, err
	})
	if err != nil {
		return nil, err
	}
	if resp.Header.Get("X-RateLimit-Remaining") == "0" {
		g.mu.Lock()
		g.resetAt = resetTime(resp.Header)
		g.mu.Unlock()
	}
	switch {
	case resp.Status == http.StatusOK:
		if err := json.Unmarshal(resp.Body, v); err != nil {
			return nil, fmt.Errorf("GET %s: the answer is not what the API serves: %w", url, err)
		}
		return resp.Header, nil
	case resp.Status == http.StatusForbidden:
		if _, limited := retryAfter(resp.Header); !limited {
			return nil, fmt.Errorf("GET %s: HTTP %d: the token may lack admin:repo_hook (or admin:org_hook) read access", url, resp.Status)
		}
	}
	return nil, fmt.Errorf("GET %s: HTTP %d", url, resp.Status)
}

// retryAfter returns how long a 403 or 429 asks to wait: Retry-After
// seconds, else until X-RateLimit-Reset when the limit is spent; false
// when the answer is no rate limit (a plain refusal).
func retryAfter(h http.Header) (time.Duration, bool) {
	if d, ok := provider.RetryAfter(h.Get("Retry-After"), time.Now()); ok {
		return d, true
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		return time.Until(resetTime(h)), true
	}
	return 0, false
}

// resetTime is X-RateLimit-Reset (epoch seconds), or a minute from now
// when it is missing.
func resetTime(h http.Header) time.Time {
	if n, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		return time.Unix(n, 0)
	}
	return time.Now().Add(time.Minute)
}

// nextLink returns the rel="next" URL of a Link header, or "".
func nextLink(link string) string {
	for part := range strings.SplitSeq(link, ",") {
		url, params, ok := strings.Cut(part, ";")
		if ok && strings.Contains(params, `rel="next"`) {
			return strings.Trim(strings.TrimSpace(url), "<>")
		}
	}
	return ""
}

// headerValue returns the value of the header name in h, whatever case h
// spells it in.
func headerValue(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

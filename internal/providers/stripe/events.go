package stripe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Events lists Stripe events, the reconciler's source:
// GET /v1/events with a created range and the event types the business
// handles, about one page at a time, oldest first.
//
// There is no signature to verify here, unlike a webhook delivery: these
// events come from Stripe's API over TLS, fetched with our own secret key,
// so they are authentic. Each event keeps the bytes the API returned for
// it as its payload.
type Events struct {
	api *api
	// PageSize is the limit of each page; default 100, Stripe's most.
	PageSize int64
	// Types are the event types to list (types[]); empty lists every
	// type. Stripe takes at most 20; a longer list is not sent, and
	// every type is listed.
	Types []string

	mu   sync.Mutex
	span time.Duration // the last window that fitted in one page
}

// maxTypes is the most event types one Stripe list request may name.
const maxTypes = 20

// NewEvents lists events through the Stripe API at apiURL (Stripe's own
// when empty) with the first of key's values, read for every list call
// (a key rolled in Secrets Manager reaches a warm reconciler within the
// key's maximum age, and a refused key is reloaded), over httpClient. A
// GET that failed in transit or was answered 5xx is sent twice more, and
// a rate limit waited out.
func NewEvents(key provider.Secret, apiURL string, httpClient *http.Client) *Events {
	return &Events{api: newAPI(key, apiURL, httpClient, 2)}
}

// listedEvent is one event of a list page: the fields hookinbox keys and
// routes by, and the event's bytes as the API returned them.
type listedEvent struct {
	ID       string `json:"id"`
	Object   string `json:"object"`
	Type     string `json:"type"`
	Created  int64  `json:"created"`
	Livemode bool   `json:"livemode"`
	raw      []byte
}

func (e *listedEvent) UnmarshalJSON(b []byte) error {
	type head listedEvent
	var h head
	if err := json.Unmarshal(b, &h); err != nil {
		return err
	}
	*e = listedEvent(h)
	e.raw = append([]byte(nil), b...)
	return nil
}

// eventPage is one page of GET /v1/events.
type eventPage struct {
	HasMore bool           `json:"has_more"`
	Data    []*listedEvent `json:"data"`
}

// Next returns the events created in [from, upTo), oldest first, for an
// upTo ≤ to chosen so that they fit in about one page: Stripe lists
// newest first, so a window with more events than a page is narrowed
// (halved, or to what the page's oldest event suggests) until one fits,
// and the window that fitted is remembered for the next call. Only when
// one second holds more than a page are several pages of that second
// read. Events hookinbox cannot key are left out.
func (s *Events) Next(ctx context.Context, from, to time.Time) ([]webhook.Event, time.Time, error) {
	size := s.PageSize
	if size <= 0 || size > 100 {
		size = 100
	}
	s.mu.Lock()
	span := s.span
	s.mu.Unlock()
	if span <= 0 || span > to.Sub(from) {
		span = to.Sub(from)
	}
	// Each narrowing at least halves the window: at most ~log2(span in
	// seconds) list calls before one fits.
	for {
		end := from.Add(span)
		if end.After(to) {
			end = to
		}
		page, more, err := s.list(ctx, from, end, size, "")
		if err != nil {
			return nil, from, err
		}
		if !more {
			if int64(len(page)) < size/2 {
				span *= 2 // sparse: try a wider window next time
			}
			s.mu.Lock()
			s.span = span
			s.mu.Unlock()
			return s.events(page), end, nil
		}
		if end.Sub(from) <= time.Second {
			// More than a page in one second: read that second whole.
			all := page
			for more && len(page) > 0 {
				page, more, err = s.list(ctx, from, end, size, all[len(all)-1].ID)
				if err != nil {
					return nil, from, err
				}
				all = append(all, page...)
			}
			return s.events(all), end, nil
		}
		// The page holds the newest events of [from, end); a window as
		// long as the time it covers is likely to fit.
		covered := end.Sub(time.Unix(page[len(page)-1].Created, 0))
		span = max(min(end.Sub(from)/2, covered).Truncate(time.Second), time.Second)
	}
}

// list reads one page of the events created in [from, to), newest first,
// after the event id startingAfter (none when empty).
func (s *Events) list(ctx context.Context, from, to time.Time, size int64, startingAfter string) ([]*listedEvent, bool, error) {
	q := url.Values{
		"created[gte]": {strconv.FormatInt(from.Unix(), 10)},
		"created[lt]":  {strconv.FormatInt(to.Unix(), 10)},
		"limit":        {strconv.FormatInt(size, 10)},
	}
	if len(s.Types) > 0 && len(s.Types) <= maxTypes {
		for i, t := range s.Types {
			q.Set("types["+strconv.Itoa(i)+"]", t)
		}
	}
	if startingAfter != "" {
		q.Set("starting_after", startingAfter)
	}
	body, err := s.api.get(ctx, "/v1/events?"+q.Encode(), nil)
	if err != nil {
		return nil, false, fmt.Errorf("stripe events: %w", err)
	}
	var page eventPage
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, false, fmt.Errorf("stripe events: the answer is not a list of events: %w", err)
	}
	return page.Data, page.HasMore, nil
}

// events returns the listed events hookinbox can key, oldest first (by
// creation time, then id).
func (s *Events) events(listed []*listedEvent) []webhook.Event {
	out := make([]webhook.Event, 0, len(listed))
	for _, e := range listed {
		if webhook.ValidateEventID(e.ID) != nil || e.Type == "" || (e.Object != "" && e.Object != "event") {
			continue // not something Stripe sends; nothing to claim
		}
		out = append(out, webhook.Event{
			Provider: Name,
			ID:       e.ID,
			Type:     e.Type,
			Created:  time.Unix(e.Created, 0).UTC(),
			Livemode: e.Livemode,
			Raw:      e.raw,
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

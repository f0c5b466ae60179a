package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/form"

	"github.com/hookinbox/hookinbox/internal/webhook"
)

// StripeEvents lists Stripe events with stripe-go: GET /v1/events with a
// created range, every page (auto-pagination).
//
// There is no signature to verify here, unlike a webhook delivery: these
// events come from Stripe's API over TLS, fetched with our own secret key,
// so they are authentic. Each event keeps the bytes the API returned for
// it as its payload.
type StripeEvents struct {
	backend stripe.Backend
	key     string
	// PageSize is the limit of each page; default 100, Stripe's most.
	PageSize int64
	// Keys, when set, gives the key for each List instead of the one
	// NewStripeEvents was given (a *secrets.Rotating's Values), so a key
	// rolled in Secrets Manager reaches a warm reconciler within the
	// source's maximum age.
	Keys func(ctx context.Context) ([]string, error)
}

// NewStripeEvents lists events through the Stripe API at apiURL (Stripe's
// own when empty) with apiKey, over httpClient (stripe-go's default when
// nil). stripe-go retries a failed GET twice and logs nothing.
func NewStripeEvents(apiKey, apiURL string, httpClient *http.Client) *StripeEvents {
	cfg := &stripe.BackendConfig{
		HTTPClient:        httpClient,
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
		MaxNetworkRetries: stripe.Int64(2),
		EnableTelemetry:   stripe.Bool(false),
	}
	if apiURL != "" {
		cfg.URL = stripe.String(apiURL)
	}
	return &StripeEvents{backend: stripe.GetBackendWithConfig(stripe.APIBackend, cfg), key: apiKey}
}

// Provider returns "stripe".
func (s *StripeEvents) Provider() string { return "stripe" }

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
	stripe.APIResource
	stripe.ListMeta
	Data []*listedEvent `json:"data"`
}

// List returns the events created in [from, to), oldest first (Stripe
// lists newest first). Events hookinbox cannot key are left out.
func (s *StripeEvents) List(ctx context.Context, from, to time.Time) ([]webhook.Event, error) {
	params := &stripe.EventListParams{
		CreatedRange: &stripe.RangeQueryParams{GreaterThanOrEqual: from.Unix(), LesserThan: to.Unix()},
	}
	size := s.PageSize
	if size <= 0 || size > 100 {
		size = 100
	}
	params.Limit = stripe.Int64(size)
	params.Context = ctx
	key := s.key
	if s.Keys != nil {
		keys, err := s.Keys(ctx)
		if err != nil {
			return nil, fmt.Errorf("stripe events: api key: %w", err)
		}
		key = keys[0]
	}
	it := stripe.GetIter(params, func(p *stripe.Params, b *form.Values) ([]interface{}, stripe.ListContainer, error) {
		page := &eventPage{}
		err := s.backend.CallRaw(http.MethodGet, "/v1/events", key, b, p, page)
		items := make([]interface{}, len(page.Data))
		for i, e := range page.Data {
			items[i] = e
		}
		return items, page, err
	})
	var out []webhook.Event
	for it.Next() {
		e := it.Current().(*listedEvent)
		if webhook.ValidateEventID(e.ID) != nil || e.Type == "" || (e.Object != "" && e.Object != "event") {
			continue // not something Stripe sends; nothing to claim
		}
		out = append(out, webhook.Event{
			Provider: s.Provider(),
			ID:       e.ID,
			Type:     e.Type,
			Created:  time.Unix(e.Created, 0).UTC(),
			Livemode: e.Livemode,
			Raw:      e.raw,
		})
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("stripe events: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

package shopify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// apiVersion is the Admin GraphQL API version orders asks
// for by default.
const apiVersion = "2025-07"

// adminURL returns the shop's Admin GraphQL endpoint for
// apiVersion.
func adminURL(shopDomain string) string {
	return "https://" + shopDomain + "/admin/api/" + apiVersion + "/graphql.json"
}

// orders lists the paid orders a shop's webhooks may have lost:
// Next asks the Admin GraphQL API for the orders updated in the window
// and paid (orders(query: "updated_at:>=… updated_at:<… financial_status:paid"),
// sorted by UPDATED_AT, cursor paging), and returns each as the orders/paid
// webhook would bring it (the REST order fields the business reads: id,
// financial_status, total_price, currency, customer.id, line_items' sku,
// variant_id and quantity), keyed shopify#order-<id>-paid, as the
// orders/paid webhook of a paid order is (verifier): an order whose
// webhook came is a duplicate here, and one whose webhook was lost is
// claimed once, so the business and each destination get every paid
// order once.
//
// Query cost stays within Shopify's limits: a page asks for 10 orders of
// at most 40 line items each (an order with more is read on, page by
// page), and before each query the run waits for the bucket to hold the
// last query's requested cost (throttleStatus), or a THROTTLED or 429
// answer's wait, only while that ends before the deadline less Margin.
// Safe for concurrent use.
type orders struct {
	URL string // the Admin GraphQL endpoint (adminURL)
	// Shop is the shop's myshopify domain: each order's account
	// (webhook.Event.Account), so the shop's erasures find it.
	Shop  string
	Token provider.Secret
	HTTP  *http.Client
	// Margin is how much of the deadline a throttle wait leaves; default 15 s.
	Margin time.Duration
	// Sleep waits d or until ctx ends; default a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error

	mu      sync.Mutex
	readyAt time.Time // when the bucket holds the last query's requested cost again
}

const shopifyOrdersQuery = `query Orders($first: Int!, $after: String, $q: String!) {
  orders(first: $first, after: $after, sortKey: UPDATED_AT, query: $q) {
    pageInfo { hasNextPage endCursor }
    nodes {
      id legacyResourceId updatedAt displayFinancialStatus
      currencyCode
      totalPriceSet { shopMoney { amount currencyCode } }
      customer { legacyResourceId }
      lineItems(first: 40) { pageInfo { hasNextPage endCursor } nodes { sku quantity variant { legacyResourceId } } }
    }
  }
}`

const shopifyLineItemsQuery = `query LineItems($id: ID!, $after: String) {
  order(id: $id) {
    lineItems(first: 40, after: $after) { pageInfo { hasNextPage endCursor } nodes { sku quantity variant { legacyResourceId } } }
  }
}`

type shopifyPageInfo struct {
	HasNextPage bool   `json:"hasNextPage"`
	EndCursor   string `json:"endCursor"`
}

type shopifyLineItems struct {
	PageInfo shopifyPageInfo `json:"pageInfo"`
	Nodes    []struct {
		SKU      string `json:"sku"`
		Quantity int64  `json:"quantity"`
		Variant  *struct {
			LegacyResourceID string `json:"legacyResourceId"`
		} `json:"variant"`
	} `json:"nodes"`
}

type shopifyOrder struct {
	ID                     string    `json:"id"`
	LegacyResourceID       string    `json:"legacyResourceId"`
	UpdatedAt              time.Time `json:"updatedAt"`
	DisplayFinancialStatus string    `json:"displayFinancialStatus"`
	TotalPriceSet          struct {
		ShopMoney struct {
			Amount       string `json:"amount"`
			CurrencyCode string `json:"currencyCode"`
		} `json:"shopMoney"`
	} `json:"totalPriceSet"`
	Customer *struct {
		LegacyResourceID string `json:"legacyResourceId"`
	} `json:"customer"`
	LineItems shopifyLineItems `json:"lineItems"`
}

// Next implements Lister: the orders updated in [from, to) and paid,
// oldest update first; upTo is to.
func (s *orders) Next(ctx context.Context, from, to time.Time) ([]webhook.Event, time.Time, error) {
	q := fmt.Sprintf("updated_at:>='%s' updated_at:<'%s' financial_status:paid", from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	var evs []webhook.Event
	var after *string
	for {
		var data struct {
			Orders struct {
				PageInfo shopifyPageInfo `json:"pageInfo"`
				Nodes    []shopifyOrder  `json:"nodes"`
			} `json:"orders"`
		}
		if err := s.query(ctx, shopifyOrdersQuery, map[string]any{"first": 10, "after": after, "q": q}, &data); err != nil {
			return nil, from, fmt.Errorf("list orders updated since %s: %w", from.Format(time.RFC3339), err)
		}
		for _, o := range data.Orders.Nodes {
			if o.DisplayFinancialStatus != "PAID" || o.UpdatedAt.Before(from) || !o.UpdatedAt.Before(to) {
				continue
			}
			ev, err := s.event(ctx, o)
			if err != nil {
				return nil, from, fmt.Errorf("order %s: %w", o.LegacyResourceID, err)
			}
			evs = append(evs, ev)
		}
		if !data.Orders.PageInfo.HasNextPage {
			return evs, to, nil
		}
		after = &data.Orders.PageInfo.EndCursor
	}
}

// event renders a paid order as its orders/paid webhook body would carry
// it, reading the rest of its line items when there are more.
func (s *orders) event(ctx context.Context, o shopifyOrder) (webhook.Event, error) {
	if err := webhook.ValidateEventID(o.LegacyResourceID); err != nil {
		return webhook.Event{}, err
	}
	type lineItem struct {
		SKU       string      `json:"sku"`
		VariantID json.Number `json:"variant_id,omitempty"`
		Quantity  int64       `json:"quantity"`
	}
	body := struct {
		ID              json.Number `json:"id"`
		FinancialStatus string      `json:"financial_status"`
		TotalPrice      string      `json:"total_price"`
		Currency        string      `json:"currency"`
		UpdatedAt       string      `json:"updated_at"`
		Customer        *struct {
			ID json.Number `json:"id"`
		} `json:"customer"`
		LineItems []lineItem `json:"line_items"`
	}{
		ID: json.Number(o.LegacyResourceID), FinancialStatus: "paid", UpdatedAt: o.UpdatedAt.Format(time.RFC3339),
		TotalPrice: o.TotalPriceSet.ShopMoney.Amount, Currency: o.TotalPriceSet.ShopMoney.CurrencyCode,
		LineItems: []lineItem{},
	}
	if o.Customer != nil && o.Customer.LegacyResourceID != "" {
		body.Customer = &struct {
			ID json.Number `json:"id"`
		}{json.Number(o.Customer.LegacyResourceID)}
	}
	items := o.LineItems
	for {
		for _, li := range items.Nodes {
			item := lineItem{SKU: li.SKU, Quantity: li.Quantity}
			if li.Variant != nil {
				item.VariantID = json.Number(li.Variant.LegacyResourceID)
			}
			body.LineItems = append(body.LineItems, item)
		}
		if !items.PageInfo.HasNextPage {
			break
		}
		var data struct {
			Order *struct {
				LineItems shopifyLineItems `json:"lineItems"`
			} `json:"order"`
		}
		if err := s.query(ctx, shopifyLineItemsQuery, map[string]any{"id": o.ID, "after": items.PageInfo.EndCursor}, &data); err != nil {
			return webhook.Event{}, fmt.Errorf("line items: %w", err)
		}
		if data.Order == nil {
			return webhook.Event{}, errors.New("line items: the order is gone")
		}
		items = data.Order.LineItems
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return webhook.Event{}, err
	}
	return webhook.Event{Provider: Name, ID: paidOrder(o.LegacyResourceID), Type: "orders/paid",
		Created: o.UpdatedAt.UTC(), Raw: raw, Account: s.Shop}, nil
}

// query runs one GraphQL query into data, waiting for the cost bucket
// within the deadline; a refused token (401) is reloaded once.
func (s *orders) query(ctx context.Context, query string, vars map[string]any, data any) error {
	reqBody, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	api := &provider.Client{Secret: s.Token, HTTP: s.HTTP, Margin: s.Margin, Sleep: s.Sleep,
		Auth: func(req *http.Request, token string) { req.Header.Set("X-Shopify-Access-Token", token) }}
	s.mu.Lock()
	wait := time.Until(s.readyAt)
	s.mu.Unlock()
	for try := 0; ; try++ {
		if err := provider.Pause(ctx, wait, s.Margin, s.Sleep, "throttled"); err != nil {
			return err
		}
		resp, err := api.Do(ctx, func(ctx context.Context) (*http.Request, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(reqBody))
			if err == nil {
				req.Header.Set("Content-Type", "application/json")
			}
			return req, err
		})
		if err != nil {
			return err
		}
		if resp.Status != http.StatusOK {
			return fmt.Errorf("HTTP %d", resp.Status)
		}
		var answer graphQLAnswer
		if err := json.Unmarshal(resp.Body, &answer); err != nil {
			return fmt.Errorf("the answer is not GraphQL's: %w", err)
		}
		wait = s.throttle(answer)
		if len(answer.Errors) > 0 {
			if answer.Errors[0].Extensions.Code == "THROTTLED" && try < 3 {
				wait = max(wait, time.Second)
				continue
			}
			return fmt.Errorf("GraphQL: %s", answer.Errors[0].Message)
		}
		if err := json.Unmarshal(answer.Data, data); err != nil {
			return fmt.Errorf("the answer's data: %w", err)
		}
		return nil
	}
}

// graphQLAnswer is the Admin API's answer to a query.
type graphQLAnswer struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string `json:"message"`
		Extensions struct {
			Code string `json:"code"`
		} `json:"extensions"`
	} `json:"errors"`
	Extensions struct {
		Cost struct {
			RequestedQueryCost float64 `json:"requestedQueryCost"`
			ThrottleStatus     struct {
				CurrentlyAvailable float64 `json:"currentlyAvailable"`
				RestoreRate        float64 `json:"restoreRate"`
			} `json:"throttleStatus"`
		} `json:"cost"`
	} `json:"extensions"`
}

// throttle returns how long the bucket needs to hold the query's cost
// again, and remembers when that is for the next query.
func (s *orders) throttle(a graphQLAnswer) time.Duration {
	cost := a.Extensions.Cost
	deficit := cost.RequestedQueryCost - cost.ThrottleStatus.CurrentlyAvailable
	if deficit <= 0 || cost.ThrottleStatus.RestoreRate <= 0 {
		return 0
	}
	wait := time.Duration(deficit / cost.ThrottleStatus.RestoreRate * float64(time.Second))
	s.mu.Lock()
	s.readyAt = time.Now().Add(wait)
	s.mu.Unlock()
	return wait
}

package standin

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Shopify stands in for the part of Shopify's Admin GraphQL API the
// reconciler calls: POST …/graphql.json with X-Shopify-Access-Token.
// It answers by the variables, not by parsing the query: with "q" it is
// the orders query (the orders whose updatedAt is within q's
// updated_at:>='…' and updated_at:<'…', PAID only when q says
// financial_status:paid, oldest update first, "first" a page, an opaque
// cursor), with "id" an order's line items after a cursor. Each order
// carries its first 40 line items. Every answer reports a query cost
// with a full bucket. Orders are set by the test (SetOrder), or on the
// local stack with PUT /_standin/orders (a ShopifyOrder as JSON). Safe for
// concurrent use.
type Shopify struct {
	Token string

	mu      sync.Mutex
	orders  map[int64]ShopifyOrder
	queries int
}

// ShopifyOrder is the part of an order the stand-in serves.
type ShopifyOrder struct {
	ID         int64             `json:"id"`
	UpdatedAt  time.Time         `json:"updated_at"`
	Financial  string            `json:"financial"`   // displayFinancialStatus: PAID, PENDING, REFUNDED, ...
	TotalPrice string            `json:"total_price"` // "49.00"
	Currency   string            `json:"currency"`
	CustomerID int64             `json:"customer_id"` // 0: a guest order
	LineItems  []ShopifyLineItem `json:"line_items"`
}

// ShopifyLineItem is one line of an order.
type ShopifyLineItem struct {
	SKU       string `json:"sku"`
	VariantID int64  `json:"variant_id"`
	Quantity  int64  `json:"quantity"`
}

// NewShopify returns a stand-in accepting token.
func NewShopify(token string) *Shopify {
	return &Shopify{Token: token, orders: map[int64]ShopifyOrder{}}
}

// SetOrder creates or changes an order.
func (s *Shopify) SetOrder(o ShopifyOrder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.orders[o.ID] = o
}

// Queries returns how many queries were answered.
func (s *Shopify) Queries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries
}

var (
	shopifyFrom = regexp.MustCompile(`updated_at:>='([^']+)'`)
	shopifyTo   = regexp.MustCompile(`updated_at:<'([^']+)'`)
)

// ServeHTTP serves the Admin GraphQL endpoint.
func (s *Shopify) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_standin/orders" && r.Method == http.MethodPut {
		var o ShopifyOrder
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&o); err != nil || o.ID <= 0 || o.Financial == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"errors": "want an order with id and financial"})
			return
		}
		if o.UpdatedAt.IsZero() {
			o.UpdatedAt = time.Now().UTC()
		}
		s.SetOrder(o)
		writeJSON(w, http.StatusOK, o)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Shopify-Access-Token")), []byte(s.Token)) != 1 {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"errors": "[API] Invalid API key or access token (unrecognized login or wrong password)"})
		return
	}
	var req struct {
		Variables struct {
			First int     `json:"first"`
			After *string `json:"after"`
			Q     *string `json:"q"`
			ID    string  `json:"id"`
		} `json:"variables"`
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/graphql.json") || json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req) != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"errors": "want POST …/graphql.json with a JSON query"})
		return
	}
	s.mu.Lock()
	s.queries++
	s.mu.Unlock()
	v := req.Variables
	var data any
	if v.Q != nil {
		data = map[string]any{"orders": s.page(*v.Q, v.First, v.After)}
	} else {
		data = map[string]any{"order": s.lineItemsOf(v.ID, v.After)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": data, "extensions": map[string]any{"cost": map[string]any{
		"requestedQueryCost": 100, "actualQueryCost": 10,
		"throttleStatus": map[string]any{"maximumAvailable": 2000, "currentlyAvailable": 1990, "restoreRate": 100},
	}}})
}

func (s *Shopify) page(q string, first int, after *string) map[string]any {
	var from, to time.Time
	if m := shopifyFrom.FindStringSubmatch(q); m != nil {
		from, _ = time.Parse(time.RFC3339, m[1])
	}
	to = time.Now().Add(time.Hour)
	if m := shopifyTo.FindStringSubmatch(q); m != nil {
		to, _ = time.Parse(time.RFC3339, m[1])
	}
	paidOnly := strings.Contains(q, "financial_status:paid")
	s.mu.Lock()
	var match []ShopifyOrder
	for _, o := range s.orders {
		if !o.UpdatedAt.Before(from) && o.UpdatedAt.Before(to) && (!paidOnly || o.Financial == "PAID") {
			match = append(match, o)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(match, func(a, b ShopifyOrder) int { return cmp.Or(a.UpdatedAt.Compare(b.UpdatedAt), cmp.Compare(a.ID, b.ID)) })
	start := 0
	if after != nil {
		start, _ = strconv.Atoi(*after)
	}
	if first <= 0 {
		first = 10
	}
	end := min(start+first, len(match))
	start = min(start, end)
	nodes := []any{}
	for _, o := range match[start:end] {
		node := map[string]any{
			"id": orderGID(o.ID), "legacyResourceId": strconv.FormatInt(o.ID, 10),
			"updatedAt": o.UpdatedAt.UTC().Format(time.RFC3339), "displayFinancialStatus": o.Financial,
			"currencyCode":  o.Currency,
			"totalPriceSet": map[string]any{"shopMoney": map[string]any{"amount": o.TotalPrice, "currencyCode": o.Currency}},
			"customer":      nil,
			"lineItems":     lineItemsPage(o.LineItems, 0),
		}
		if o.CustomerID != 0 {
			node["customer"] = map[string]any{"legacyResourceId": strconv.FormatInt(o.CustomerID, 10)}
		}
		nodes = append(nodes, node)
	}
	return map[string]any{"pageInfo": map[string]any{"hasNextPage": end < len(match), "endCursor": strconv.Itoa(end)}, "nodes": nodes}
}

func (s *Shopify) lineItemsOf(gid string, after *string) any {
	id, _ := strconv.ParseInt(strings.TrimPrefix(gid, "gid://shopify/Order/"), 10, 64)
	s.mu.Lock()
	o, ok := s.orders[id]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	start := 0
	if after != nil {
		start, _ = strconv.Atoi(*after)
	}
	return map[string]any{"lineItems": lineItemsPage(o.LineItems, start)}
}

// lineItemsPage is 40 line items from start, as the connection serves them.
func lineItemsPage(items []ShopifyLineItem, start int) map[string]any {
	end := min(start+40, len(items))
	start = min(start, end)
	nodes := []any{}
	for _, li := range items[start:end] {
		nodes = append(nodes, map[string]any{"sku": li.SKU, "quantity": li.Quantity,
			"variant": map[string]any{"legacyResourceId": strconv.FormatInt(li.VariantID, 10)}})
	}
	return map[string]any{"pageInfo": map[string]any{"hasNextPage": end < len(items), "endCursor": strconv.Itoa(end)}, "nodes": nodes}
}

func orderGID(id int64) string { return "gid://shopify/Order/" + strconv.FormatInt(id, 10) }

package shopify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/platform/secrets/secretstest"
	"github.com/hookinbox/hookinbox/provider"
)

// The next query waits for the cost bucket to refill to the last query's
// requested cost, and a THROTTLED answer is retried after a wait; both
// within the deadline.
func TestShopifyQueriesWaitForTheCostBucket(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch n {
		case 1: // a page with more after it; the bucket is 400 short, refilling 50 a second
			_, _ = w.Write([]byte(`{"data":{"orders":{"pageInfo":{"hasNextPage":true,"endCursor":"c1"},"nodes":[]}},
				"extensions":{"cost":{"requestedQueryCost":500,"throttleStatus":{"currentlyAvailable":100,"restoreRate":50}}}}`))
		case 2:
			_, _ = w.Write([]byte(`{"errors":[{"message":"Throttled","extensions":{"code":"THROTTLED"}}],
				"extensions":{"cost":{"requestedQueryCost":500,"throttleStatus":{"currentlyAvailable":450,"restoreRate":50}}}}`))
		default:
			_, _ = w.Write([]byte(`{"data":{"orders":{"pageInfo":{"hasNextPage":false},"nodes":[]}},
				"extensions":{"cost":{"requestedQueryCost":500,"throttleStatus":{"currentlyAvailable":1000,"restoreRate":50}}}}`))
		}
	}))
	defer srv.Close()
	var slept []time.Duration
	s := &orders{URL: srv.URL, Token: secretstest.Static("shpat_1"),
		Sleep: func(_ context.Context, d time.Duration) error {
			slept = append(slept, d.Round(time.Second))
			return nil
		}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	now := time.Now()
	if _, _, err := s.Next(ctx, now.Add(-time.Hour), now); err != nil {
		t.Fatal(err)
	}
	if calls != 3 || len(slept) != 2 || slept[0] != 8*time.Second || slept[1] != time.Second {
		t.Errorf("%d queries, slept %v; want 3 queries, 8s for the bucket then 1s after THROTTLED", calls, slept)
	}
}

// TestOrdersURLDefaultsToTheShops: the endpoint defaults to the shop's
// own at the pinned version.
func TestOrdersURLDefaultsToTheShops(t *testing.T) {
	env := map[string]string{"SHOPIFY_SHOP_DOMAIN": "acme.myshopify.com", "SHOPIFY_ADMIN_TOKEN": "shpat_1"}
	src, err := Provider{}.Reconciler(context.Background(), &provider.Env{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	o, ok := src.List.(*orders)
	if want := "https://acme.myshopify.com/admin/api/" + apiVersion + "/graphql.json"; !ok || o.URL != want {
		t.Errorf("source %#v, want the orders of %s", src.List, want)
	}
}

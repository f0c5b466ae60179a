package standin

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/client"
)

// TestStripeEventsListPagesAsStripeDoes lists the stand-in's events with
// stripe-go's auto-pagination and created ranges, as the reconciler does.
func TestStripeEventsListPagesAsStripeDoes(t *testing.T) {
	s := NewStripe()
	s.Key = "sk_test_events"
	srv, err := Serve(s, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// 25 events, two per second (ties), created 1000..1012.
	for i := 0; i < 25; i++ {
		body := fmt.Sprintf(`{"id":"evt_%02d","object":"event","type":"invoice.paid","created":%d}`, i, 1000+i/2)
		if err := s.AddEvent([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddEvent([]byte(`{"object":"event"}`)); err == nil {
		t.Error("AddEvent of an event without id: no error")
	}
	b := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:           stripe.String(srv.URL),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	api := client.New(s.Key, &stripe.Backends{API: b, Connect: b, Uploads: b})

	list := func(r *stripe.RangeQueryParams, limit int64) ([]string, error) {
		p := &stripe.EventListParams{CreatedRange: r}
		p.Limit = stripe.Int64(limit)
		it := api.Events.List(p)
		var ids []string
		for it.Next() {
			ids = append(ids, it.Event().ID)
		}
		return ids, it.Err()
	}
	ids := func(from, to int) []string { // newest first; ties newest-added first
		var out []string
		for i := to; i >= from; i-- {
			out = append(out, fmt.Sprintf("evt_%02d", i))
		}
		return out
	}
	tests := []struct {
		name  string
		r     *stripe.RangeQueryParams
		limit int64
		want  []string
	}{
		{"all, pages of 4", nil, 4, ids(0, 24)},
		{"all, one page", nil, 100, ids(0, 24)},
		{"gte and lt", &stripe.RangeQueryParams{GreaterThanOrEqual: 1003, LesserThan: 1008}, 3, ids(6, 15)},
		{"gt and lte", &stripe.RangeQueryParams{GreaterThan: 1003, LesserThanOrEqual: 1008}, 5, ids(8, 17)},
		{"empty range", &stripe.RangeQueryParams{GreaterThanOrEqual: 2000}, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := list(tt.r, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("listed IDs (-want +got):\n%s", diff)
			}
		})
	}

	// A wrong key is refused, as Stripe does.
	bad := client.New("sk_test_wrong", &stripe.Backends{API: b, Connect: b, Uploads: b})
	it := bad.Events.List(&stripe.EventListParams{})
	if it.Next() || it.Err() == nil {
		t.Error("listing with a wrong key succeeded")
	}
}

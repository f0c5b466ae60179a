package pipeline_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/standin"
)

// TestDeliveredPlaysTheSender: a Stripe subscription event delivered to
// the local stack sets the subscription on the Stripe stand-in, as
// Stripe's state is after sending it; other providers' deliveries touch
// nothing.
func TestDeliveredPlaysTheSender(t *testing.T) {
	s := standin.NewStripe()
	srv, err := standin.Serve(s, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	st := &pipeline.Stack{Stripe: s}
	body := []byte(`{"id":"evt_1","object":"event","type":"customer.subscription.updated","created":100,` +
		`"data":{"object":{"id":"sub_1","object":"subscription","customer":"cus_1","status":"past_due"}}}`)
	get := func() string {
		resp, err := http.Get(srv.URL + "/v1/subscriptions/sub_1")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var sub struct{ Status string }
		_ = json.NewDecoder(resp.Body).Decode(&sub)
		return sub.Status
	}
	st.Delivered("shopify", body)
	if got := get(); got != "" {
		t.Errorf("after a shopify delivery: subscription %q, want none", got)
	}
	st.Delivered("stripe", body)
	if got := get(); got != "past_due" {
		t.Errorf("after the stripe delivery: subscription %q, want past_due", got)
	}
}

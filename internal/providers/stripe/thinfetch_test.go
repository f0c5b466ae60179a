package stripe_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stripe/stripe-go/v76"

	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/platform/secrets/secretstest"
	stripeprovider "github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/stripeevent"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestFetchThin: a stored thin notification is fetched as its v2 event
// and related object, and handed over in the shape of a snapshot event
// under the claim's id, with the Stripe-Version each call must carry.
func TestFetchThin(t *testing.T) {
	api := standin.NewStripe()
	api.Key = "sk_test_thin"
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	session := `{"id":"cs_thin1","object":"checkout.session","customer_details":{"email":"jenny.rosen@example.com"},"payment_status":"paid"}`
	api.SetObject("/v1/checkout/sessions/cs_thin1", []byte(session))
	rel := verifytest.StripeRelated{ID: "cs_thin1", Type: "checkout.session", URL: "/v1/checkout/sessions/cs_thin1"}
	migrating := verifytest.StripeThin("v1.checkout.session.completed", "evt_test_65thin1", at, rel, "evt_1snapshot1")
	if err := api.AddThinEvent(migrating); err != nil {
		t.Fatal(err)
	}
	gone := verifytest.StripeThin("v1.checkout.session.completed", "evt_test_65gone", at, rel, "")
	lostObject := verifytest.StripeThin("v1.customer.created", "evt_test_65lost", at,
		verifytest.StripeRelated{ID: "cus_lost", Type: "customer", URL: "/v1/customers/cus_lost"}, "")
	if err := api.AddThinEvent(lostObject); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	fetch := stripeprovider.FetchEvent(secretstest.Static("sk_test_thin"), srv.URL, srv.Client())
	ctx := context.Background()

	raw, err := fetch(ctx, "evt_1snapshot1", migrating)
	if err != nil {
		t.Fatal(err)
	}
	ev := webhook.Event{Provider: "stripe", ID: "evt_1snapshot1", Raw: raw}
	se, err := stripeevent.Parse(ev)
	if err != nil {
		t.Fatal(err)
	}
	if se.ID != "evt_1snapshot1" || se.Type != "checkout.session.completed" || se.Created != at.Unix() || se.APIVersion != stripe.APIVersion {
		t.Errorf("view = id %q type %q created %d api_version %q; want the claim's id, the snapshot type, the event's time, stripe-go's version",
			se.ID, se.Type, se.Created, se.APIVersion)
	}
	cs, err := stripeevent.Object[stripe.CheckoutSession](ev)
	if err != nil || cs.ID != "cs_thin1" || cs.CustomerDetails.Email != "jenny.rosen@example.com" {
		t.Errorf("data.object = %+v, %v; want the session as fetched", cs, err)
	}
	paths, versions := api.ThinGets()
	if diff := cmp.Diff([]string{"/v2/core/events/evt_test_65thin1", "/v1/checkout/sessions/cs_thin1"}, paths); diff != "" {
		t.Errorf("GETs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{stripeprovider.V2Version, stripe.APIVersion}, versions); diff != "" {
		t.Errorf("Stripe-Version sent (-want +got):\n%s", diff)
	}

	for name, tc := range map[string]struct {
		stored []byte
		names  string
	}{
		"the v2 event is unknown": {gone, "evt_test_65gone"},
		"its object is unknown":   {lostObject, "cus_lost"},
	} {
		_, err := fetch(ctx, "x", tc.stored)
		if !webhook.IsPermanent(err) || !strings.Contains(err.Error(), tc.names) || !strings.Contains(err.Error(), "404") {
			t.Errorf("%s: %v, want a permanent error naming %s and the 404", name, err, tc.names)
		}
	}
	// snapshot_event only in the fetched v2 event: claimed under the thin
	// id, the action is the twin's.
	withoutTwin := verifytest.StripeThin("v1.checkout.session.completed", "evt_test_65thin1", at, rel, "")
	if _, err := fetch(ctx, "evt_test_65thin1", withoutTwin); !errors.Is(err, webhook.ErrNoHandler) || !strings.Contains(err.Error(), "evt_1snapshot1") {
		t.Errorf("thin twin claimed under its own id: %v, want ErrNoHandler naming the snapshot event", err)
	}
	wrongKey := stripeprovider.FetchEvent(secretstest.Static("sk_test_wrong"), srv.URL, srv.Client())
	if _, err := wrongKey(ctx, "evt_1snapshot1", migrating); err == nil || webhook.IsPermanent(err) {
		t.Errorf("fetch with a rejected key: %v, want a transient error", err)
	}
}

// TestFetchThinWithoutRelatedObject: a v2 event with no related object
// (a health event) is handed over with its data as data.object.
func TestFetchThinWithoutRelatedObject(t *testing.T) {
	api := standin.NewStripe()
	n := verifytest.StripeThin("v2.core.health.event_generation_failure.resolved", "evt_test_65health", time.Now(), verifytest.StripeRelated{}, "")
	var full map[string]any
	_ = json.Unmarshal(n, &full)
	full["data"] = map[string]any{"impact": map[string]any{"event_type": "customer.created", "missing_events_count": 3}}
	body, _ := json.Marshal(full)
	if err := api.AddThinEvent(body); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	raw, err := stripeprovider.FetchEvent(secretstest.Static("sk"), srv.URL, srv.Client())(context.Background(), "evt_test_65health", n)
	if err != nil {
		t.Fatal(err)
	}
	se, err := stripeevent.Parse(webhook.Event{Provider: "stripe", ID: "evt_test_65health", Raw: raw})
	if err != nil || se.Type != "v2.core.health.event_generation_failure.resolved" || !strings.Contains(string(se.Data.Raw), `"missing_events_count":3`) {
		t.Errorf("view = %s, %v; want the v2 type and the event's data as data.object", raw, err)
	}
}

func TestIsThin(t *testing.T) {
	_, thin, _ := verifytest.StripeThinPayloads()
	for _, b := range thin {
		if !stripeprovider.IsThin(b) {
			t.Errorf("IsThin(%.60s) = false", b)
		}
	}
	for _, b := range [][]byte{nil, []byte("{}"), verifytest.StripeEvent("customer.created", "evt_1", time.Now())} {
		if stripeprovider.IsThin(b) {
			t.Errorf("IsThin(%.60s) = true", b)
		}
	}
}

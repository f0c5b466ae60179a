package stripe_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76"

	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/platform/secrets/secretstest"
	stripeprovider "github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestFetchEvent(t *testing.T) {
	api := standin.NewStripe()
	api.Key = "sk_test_fetch"
	body := verifytest.StripeEvent("checkout.session.completed", "evt_fetch1", time.Now().Add(-time.Hour))
	if err := api.AddEvent(body); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	fetch := stripeprovider.FetchEvent(secretstest.Static("sk_test_fetch"), srv.URL, srv.Client())

	got, err := fetch(context.Background(), "evt_fetch1", nil)
	if err != nil || string(got) != string(body) {
		t.Errorf("fetch evt_fetch1 = %.60s..., %v; want the event's bytes", got, err)
	}
	_, err = fetch(context.Background(), "evt_unknown", nil)
	if err == nil || !webhook.IsPermanent(err) || !strings.Contains(err.Error(), "evt_unknown") {
		t.Errorf("fetch of an unknown event: %v, want a permanent error naming it", err)
	}
	wrongKey := stripeprovider.FetchEvent(secretstest.Static("sk_test_wrong"), srv.URL, srv.Client())
	if _, err := wrongKey(context.Background(), "evt_fetch1", nil); err == nil || webhook.IsPermanent(err) {
		t.Errorf("fetch with a rejected key: %v, want a transient error (the key may be rotating)", err)
	}
}

// TestAPIVersionIsStripeGos: the v1 calls ask for the version the
// business's stripe-go structs decode.
func TestAPIVersionIsStripeGos(t *testing.T) {
	if stripeprovider.APIVersion != stripe.APIVersion {
		t.Errorf("APIVersion = %s, stripe-go's = %s", stripeprovider.APIVersion, stripe.APIVersion)
	}
}

// TestProcessorWithoutAKey: a processor with no Stripe key starts, and a
// Stripe event it would have to fetch is parked with the reason.
func TestProcessorWithoutAKey(t *testing.T) {
	f, err := stripeprovider.Provider{}.Processor(context.Background(), &provider.Env{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("Processor: %v", err)
	}
	if f.Mode != provider.ModeUnchecked {
		t.Errorf("Mode = %v, want unchecked", f.Mode)
	}
	_, err = f.Get(context.Background(), "evt_1", nil)
	if !webhook.IsPermanent(err) || !strings.Contains(err.Error(), "StripeApiKeyArn") {
		t.Errorf("Get = %v, want a permanent error naming StripeApiKeyArn", err)
	}
}

package mollie_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/platform/secrets/secretstest"
	"github.com/hookinbox/hookinbox/internal/providers/mollie"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

const apiKey = "test_dHar4XY7LxsDOtmnkVtjNVWXLSlXsM"

func paidPayment(t *testing.T) standin.MolliePayment {
	t.Helper()
	raw, err := os.ReadFile("../../../testdata/mollie/payment.paid.json")
	if err != nil {
		t.Fatal(err)
	}
	var p standin.MolliePayment
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPayments(t *testing.T) {
	api := standin.NewMollie(apiKey)
	p := paidPayment(t)
	api.SetPayment(p)
	srv := httptest.NewServer(api)
	defer srv.Close()

	// A key rotated in Secrets Manager: the first load has the old one,
	// the reload the new one.
	loads := 0
	rotated := &secrets.Rotating{MinInterval: time.Nanosecond, Load: func(context.Context) ([]string, error) {
		loads++
		if loads == 1 {
			return []string{"test_revokedrevokedrevokedrevoked"}, nil
		}
		return []string{apiKey}, nil
	}}
	if err := rotated.Init(context.Background()); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		key     *secrets.Rotating
		id      string
		wantErr func(error) bool // nil: the payment
	}{
		{name: "paid payment", key: secretstest.Static(apiKey), id: p.ID},
		{name: "a refused key is reloaded once", key: rotated, id: p.ID},
		{name: "unknown payment is ErrNotFound", key: secretstest.Static(apiKey), id: "tr_unknown0001",
			wantErr: func(err error) bool { return errors.Is(err, provider.ErrNotFound) }},
		{name: "a key refused after reloading is transient", key: secretstest.Static("test_wrongwrongwrongwrongwrongwr"), id: p.ID,
			wantErr: func(err error) bool {
				return err != nil && !errors.Is(err, provider.ErrNotFound) && !webhook.IsPermanent(err)
			}},
		{name: "an id Mollie cannot issue is permanent, never sent", key: secretstest.Static(apiKey), id: "tr_../../customers",
			wantErr: webhook.IsPermanent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := mollie.Payments(tt.key, srv.URL, srv.Client())(context.Background(), tt.id)
			if tt.wantErr != nil {
				if !tt.wantErr(err) {
					t.Fatalf("Payments error = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Payments: %v", err)
			}
			var got standin.MolliePayment
			if err := json.Unmarshal(raw, &got); err != nil || got.ID != tt.id || got.Status != "paid" {
				t.Errorf("Payments = %s, %v; want payment %s, paid", raw, err, tt.id)
			}
		})
	}
	if got := api.Fetches("tr_../../customers"); got != 0 {
		t.Errorf("an invalid id was fetched %d times, want 0", got)
	}
}

func TestPaymentsRefusesAnotherAnswer(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
	}{
		{name: "another payment", status: http.StatusOK, body: `{"resource":"payment","id":"tr_other00001","status":"paid"}`},
		{name: "no status", status: http.StatusOK, body: `{"resource":"payment","id":"tr_WDqYK6vllg"}`},
		{name: "not a payment", status: http.StatusOK, body: `{"resource":"refund","id":"tr_WDqYK6vllg","status":"paid"}`},
		{name: "HTML", status: http.StatusOK, body: `<html>maintenance</html>`},
		{name: "server error", status: http.StatusInternalServerError, body: `{}`},
		{name: "rate limited", status: http.StatusTooManyRequests, body: `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			_, err := mollie.Payments(secretstest.Static(apiKey), srv.URL, srv.Client())(context.Background(), "tr_WDqYK6vllg")
			if err == nil || errors.Is(err, provider.ErrNotFound) || webhook.IsPermanent(err) {
				t.Errorf("Payments error = %v, want a transient error", err)
			}
		})
	}
}

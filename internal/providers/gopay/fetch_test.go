package gopay_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/platform/secrets/secretstest"
	"github.com/hookinbox/hookinbox/internal/providers/gopay"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestGoPayPayments(t *testing.T) {
	g := standin.NewGoPay("client-1", "secret-1")
	srv, err := standin.Serve(g, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	g.SetPayment(standin.GoPayPayment{ID: 3000006529, OrderNumber: "o-1", State: "PAID", Amount: 100, Currency: "CZK"})
	ctx := context.Background()

	fetch := gopay.Payments("client-1", secretstest.Static("secret-1"), srv.URL+"/api", nil)
	for range 2 {
		raw, err := fetch(ctx, "3000006529")
		if err != nil {
			t.Fatal(err)
		}
		if want := `"state":"PAID"`; !contains(raw, want) {
			t.Fatalf("payment %s, want %s", raw, want)
		}
	}
	if n := g.Tokens(); n != 1 {
		t.Errorf("%d tokens for two fetches, want 1 (kept until it expires)", n)
	}
	if _, err := fetch(ctx, "3000000001"); !errors.Is(err, provider.ErrNotFound) || webhook.IsPermanent(err) {
		t.Errorf("unknown payment: err = %v, want provider.ErrNotFound (IGNORED, not parked)", err)
	}
	if _, err := fetch(ctx, "12ab"); !webhook.IsPermanent(err) {
		t.Errorf("id that is not a number: err = %v, want permanent", err)
	}
	bad := gopay.Payments("client-1", secretstest.Static("wrong"), srv.URL+"/api", nil)
	if _, err := bad(ctx, "3000006529"); err == nil || webhook.IsPermanent(err) || errors.Is(err, provider.ErrNotFound) {
		t.Errorf("refused secret: err = %v, want a transient error", err)
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

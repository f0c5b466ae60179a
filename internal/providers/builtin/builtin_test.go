package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
)

// TestEveryProviderVerifiesWhatItSigns: the registry names each provider
// once, in the order of the senders, and each provider's one signer
// (Sender.Sign, what `hookinbox send`, chaos and hookinboxtest deliver
// through) produces a delivery its own verifier accepts under the local
// receiver's secrets, keyed under its name.
func TestEveryProviderVerifiesWhatItSigns(t *testing.T) {
	files := map[string]string{
		"stripe": "stripe/checkout.session.completed.json", "github": "github/issues.json",
		"shopify": "shopify/orders_paid.json", "standard": "standard/invoice.paid.json",
		"adyen": "adyen/REFUND.json", "gopay": "gopay/payment.PAID.json",
		"paddle": "paddle/transaction.completed.json", "mollie": "mollie/payment.paid.json",
	}
	reg, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := builtin.Registry(reg.All()[0]); err == nil {
		t.Error("a provider registered twice was accepted")
	}
	senders := builtin.Senders()
	if len(senders) != len(reg.All()) {
		t.Fatalf("%d senders for %d providers", len(senders), len(reg.All()))
	}
	local := pipeline.LocalEnv("")
	for i, p := range reg.All() {
		s := senders[i]
		if s.Provider.Name() != p.Name() {
			t.Errorf("sender %d is %s's, provider %d is %s", i, s.Provider.Name(), i, p.Name())
		}
		t.Run(p.Name(), func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", files[p.Name()]))
			if err != nil {
				t.Fatal(err)
			}
			secrets := envconfig.Split(local[p.Webhook().SecretEnv])
			req, err := s.Sign(sample.Event{Body: body, File: filepath.Base(files[p.Name()])}, secrets, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if p.Webhook().Unsigned {
				secrets = nil
			}
			v, err := p.Verifier(secrets, &provider.Env{})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := v.Verify(context.Background(), req)
			if err != nil || len(evs) == 0 || evs[0].Provider != p.Name() {
				t.Fatalf("Verify = %+v, %v; want the events of %s", evs, err, p.Name())
			}
			if got := req.Method; got != p.Webhook().HTTPMethod() {
				t.Errorf("signed a %s, the provider delivers with %s", got, p.Webhook().HTTPMethod())
			}
		})
	}
}

package processorfn

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/providers/adyen"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"
)

// TestLiveModes: Stripe's mode is STRIPE_LIVEMODE's or else its key's;
// Adyen's is ADYEN_LIVE's alone, never Stripe's: a test Stripe key beside
// live Adyen leaves Adyen's events live.
func TestLiveModes(t *testing.T) {
	tests := []struct {
		name              string
		stripeMode, adyen string
		key               string
		want              map[string]bool
		wantErr           string
	}{
		{name: "LiveSecretKey", key: "sk_live_abc", want: map[string]bool{"stripe": true}},
		{name: "LiveRestrictedKey", key: "rk_live_abc", want: map[string]bool{"stripe": true}},
		{name: "TestSecretKey", key: "sk_test_abc", want: map[string]bool{"stripe": false}},
		{name: "TestRestrictedKey", key: "rk_test_abc", want: map[string]bool{"stripe": false}},
		{name: "SetOverTheKey", stripeMode: "false", key: "sk_live_abc", want: map[string]bool{"stripe": false}},
		{name: "AdyenLiveBesideTestStripe", adyen: "true", key: "sk_test_abc", want: map[string]bool{"stripe": false, "adyen": true}},
		{name: "AdyenTestBesideLiveStripe", adyen: "false", key: "sk_live_abc", want: map[string]bool{"stripe": true, "adyen": false}},
		{name: "AdyenAlone", adyen: "true", want: map[string]bool{"adyen": true}},
		{name: "NoKey", key: "", want: map[string]bool{}},
		{name: "NoKeySet", key: "", stripeMode: "true", want: map[string]bool{"stripe": true}},
		{name: "UnknownPrefix", key: "whatever", wantErr: "set STRIPE_LIVEMODE"},
		{name: "UnknownPrefixSet", stripeMode: "true", key: "whatever", want: map[string]bool{"stripe": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"STRIPE_API_KEY": tt.key, "STRIPE_LIVEMODE": tt.stripeMode, "ADYEN_LIVE": tt.adyen}
			reg, err := provider.NewRegistry(stripe.Provider{}, adyen.Provider{})
			if err != nil {
				t.Fatal(err)
			}
			fetch, err := providerFetches(context.Background(), &provider.Env{Getenv: func(k string) string { return env[k] }}, reg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("providerFetches: %v, want an error with %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), tt.key) {
					t.Errorf("the error %q holds the whole key", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, liveModes(fetch)); diff != "" {
				t.Errorf("liveModes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestModeSettingsValidated(t *testing.T) {
	env := map[string]string{"STRIPE_API_KEY": "sk_test_x", "STRIPE_LIVEMODE": "yes", "ADYEN_LIVE": "1"}
	reg, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	_, err = providerFetches(context.Background(), &provider.Env{Getenv: func(k string) string { return env[k] }}, reg)
	for _, want := range []string{`STRIPE_LIVEMODE ("yes")`, `ADYEN_LIVE ("1")`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("providerFetches: %v, want a problem naming %s", err, want)
		}
	}
}

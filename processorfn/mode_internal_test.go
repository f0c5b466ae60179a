package processorfn

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/adyen"
	"github.com/hookinbox/hookinbox/provider/builtin"
	"github.com/hookinbox/hookinbox/provider/stripe"
)

// TestLiveModes: Stripe's mode is STRIPE_LIVEMODE's or else its key's;
// Adyen's is ADYEN_LIVE's or else the deployment's (Stripe's).
func TestLiveModes(t *testing.T) {
	tests := []struct {
		name              string
		stripeMode, adyen string
		key               string
		want              map[string]bool
		wantErr           string
	}{
		{name: "LiveSecretKey", key: "sk_live_abc", want: map[string]bool{"stripe": true, "adyen": true}},
		{name: "LiveRestrictedKey", key: "rk_live_abc", want: map[string]bool{"stripe": true, "adyen": true}},
		{name: "TestSecretKey", key: "sk_test_abc", want: map[string]bool{"stripe": false, "adyen": false}},
		{name: "TestRestrictedKey", key: "rk_test_abc", want: map[string]bool{"stripe": false, "adyen": false}},
		{name: "SetOverTheKey", stripeMode: "false", key: "sk_live_abc", want: map[string]bool{"stripe": false, "adyen": false}},
		{name: "AdyenOwn", adyen: "false", key: "sk_live_abc", want: map[string]bool{"stripe": true, "adyen": false}},
		{name: "UnknownPrefix", key: "whatever", wantErr: "set STRIPE_LIVEMODE"},
		{name: "UnknownPrefixSet", stripeMode: "true", key: "whatever", want: map[string]bool{"stripe": true, "adyen": true}},
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
			if diff := cmp.Diff(tt.want, liveModes(reg.Names(), fetch)); diff != "" {
				t.Errorf("liveModes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLiveModesDeployment: a provider that follows the deployment takes
// the first mode set in registry order, and is not checked when none is.
func TestLiveModesDeployment(t *testing.T) {
	tests := []struct {
		name  string
		modes []provider.Mode
		want  map[string]bool
	}{
		{name: "NoneSet", modes: []provider.Mode{provider.ModeUnchecked, provider.ModeDeployment}, want: map[string]bool{}},
		{name: "FollowsTheFirst", modes: []provider.Mode{provider.ModeDeployment, provider.ModeTest, provider.ModeLive}, want: map[string]bool{"p0": false, "p1": false, "p2": true}},
		{name: "OwnOnly", modes: []provider.Mode{provider.ModeLive, provider.ModeUnchecked}, want: map[string]bool{"p0": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var names []string
			fetch := map[string]provider.Fetch{}
			for i, m := range tt.modes {
				name := "p" + string(rune('0'+i))
				names = append(names, name)
				fetch[name] = provider.Fetch{Mode: m}
			}
			if diff := cmp.Diff(tt.want, liveModes(names, fetch)); diff != "" {
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

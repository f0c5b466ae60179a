package processorfn

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
		{name: "NoKeyNoSetting", want: map[string]bool{}},
		{name: "NoKeyAdyenSet", adyen: "true", want: map[string]bool{"adyen": true}},
		{name: "UnknownPrefix", key: "whatever", wantErr: "set STRIPE_LIVEMODE"},
		{name: "UnknownPrefixSet", stripeMode: "true", key: "whatever", want: map[string]bool{"stripe": true, "adyen": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := liveModes(settings{StripeLivemode: tt.stripeMode, AdyenLive: tt.adyen}, tt.key)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("liveModes: %v, want an error with %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), tt.key) {
					t.Errorf("the error %q holds the whole key", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("liveModes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestModeSettingsValidated(t *testing.T) {
	env := map[string]string{
		"INBOX_TABLE": "t", "EVENTS_QUEUE_URL": "q", "EVENTS_DLQ_URL": "d", "STRIPE_API_KEY": "sk_test_x",
		"STRIPE_LIVEMODE": "yes", "ADYEN_LIVE": "1",
	}
	_, err := loadSettings(func(k string) string { return env[k] })
	for _, want := range []string{`STRIPE_LIVEMODE ("yes")`, `ADYEN_LIVE ("1")`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("loadSettings: %v, want a problem naming %s", err, want)
		}
	}
}

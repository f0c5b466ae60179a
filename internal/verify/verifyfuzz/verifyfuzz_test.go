package verifyfuzz_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/standard"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"

	"github.com/hookinbox/hookinbox/internal/verify/verifyfuzz"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	stripewebhook "github.com/stripe/stripe-go/v76/webhook"
)

// TestStripeGenuine checks the fuzzers' oracle against stripe-go's own
// ValidatePayloadWithTolerance on the same headers.
func TestStripeGenuine(t *testing.T) {
	const secret, oldSecret = "whsec_test_hookinbox_current_0123456789", "whsec_test_hookinbox_previous_987654321"
	at := time.Date(2023, 11, 20, 13, 17, 41, 0, time.UTC)
	body := verifytest.StripeEvent("invoice.paid", "evt_oracle", at)
	tampered := append([]byte(nil), body...)
	tampered[10] ^= 1
	sig := stripe.SignatureHeader(body, at, secret)
	_, v1, _ := strings.Cut(sig, ",")
	tests := []struct {
		name   string
		header string
		body   []byte
	}{
		{"genuine", sig, body},
		{"genuine with the old secret", stripe.SignatureHeader(body, at, oldSecret), body},
		{"one of two signatures", stripe.SignatureHeader(body, at, "whsec_other", secret), body},
		{"leading zero in t", fmt.Sprintf("t=0%d,%s", at.Unix(), v1), body},
		{"tampered body", sig, tampered},
		{"wrong secret", stripe.SignatureHeader(body, at, "whsec_other"), body},
		{"stale", stripe.SignatureHeader(body, at.Add(-301*time.Second), secret), body},
		{"future", stripe.SignatureHeader(body, at.Add(301*time.Second), secret), body},
		{"inside the tolerance", stripe.SignatureHeader(body, at.Add(-299*time.Second), secret), body},
		{"no signature", fmt.Sprintf("t=%d", at.Unix()), body},
		{"empty", "", body},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := verifyfuzz.StripeGenuine(tc.header, tc.body, at, 300*time.Second, secret, oldSecret)
			want := false
			for _, s := range []string{secret, oldSecret} {
				// stripe-go checks the tolerance against its own clock, so
				// the tolerance is moved to where "at" is.
				tol := time.Since(at) + 300*time.Second
				if err := stripewebhook.ValidatePayloadWithTolerance(tc.body, tc.header, s, tol); err == nil {
					want = want || !tooNew(tc.header, at)
				}
			}
			if got != want {
				t.Errorf("StripeGenuine = %v, stripe-go says %v", got, want)
			}
		})
	}
}

// tooNew reports a header whose t= is more than 300 s after at, which
// stripe-go, checking only the past, would accept.
func tooNew(header string, at time.Time) bool {
	var sec int64
	if _, err := fmt.Sscanf(header, "t=%d", &sec); err != nil {
		return false
	}
	return time.Unix(sec, 0).After(at.Add(300 * time.Second))
}

func TestHeaderLinesRoundTrip(t *testing.T) {
	in := map[string]string{"stripe-signature": "t=1,v1=ab", "x-other": "a: b"}
	got := verifyfuzz.ParseHeaderLines(verifyfuzz.HeaderLines(in))
	if fmt.Sprint(got) != fmt.Sprint(in) {
		t.Errorf("ParseHeaderLines(HeaderLines(%v)) = %v", in, got)
	}
	if got := verifyfuzz.ParseHeaderLines("Stripe-Signature :  x \nbare\n"); got["stripe-signature"] != "x" || got["bare"] != "" || len(got) != 2 {
		t.Errorf("ParseHeaderLines = %q", got)
	}
}

// TestStandardGenuine checks the fuzzers' Standard Webhooks oracle on the
// specification's reference vector and on what must not pass.
func TestStandardGenuine(t *testing.T) {
	const (
		secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		ts     = "1614265330"
		body   = `{"test": 2432232314}`
		sig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
		v1a    = "v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag=="
	)
	public := standard.PublicKey("whsk_VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk=")
	at := time.Unix(1614265330, 0)
	headers := func(prefix, id, ts, sig string) map[string]string {
		return map[string]string{prefix + "id": id, prefix + "timestamp": ts, prefix + "signature": sig}
	}
	mixed := headers("webhook-", id, "", sig)
	mixed["svix-timestamp"] = ts
	tests := []struct {
		name    string
		headers map[string]string
		body    string
		now     time.Time
		want    bool
	}{
		{"reference vector", headers("webhook-", id, ts, sig), body, at, true},
		{"among other signatures", headers("webhook-", id, ts, "v1a,xyz v1,AAAA "+sig), body, at, true},
		{"as Svix sends it", headers("svix-", id, ts, sig), body, at, true},
		{"headers of both kinds", mixed, body, at, true},
		{"inside the tolerance", headers("webhook-", id, ts, sig), body, at.Add(5 * time.Minute), true},
		{"stale", headers("webhook-", id, ts, sig), body, at.Add(5*time.Minute + time.Second), false},
		{"from the future", headers("webhook-", id, ts, sig), body, at.Add(-5*time.Minute - time.Second), false},
		{"tampered body", headers("webhook-", id, ts, sig), `{"test": 2432232315}`, at, false},
		{"another id", headers("webhook-", "msg_other", ts, sig), body, at, false},
		{"signature without its version", headers("webhook-", id, ts, strings.TrimPrefix(sig, "v1,")), body, at, false},
		{"no headers", map[string]string{}, body, at, false},
		// The reference libraries' v1a vector, under its public key.
		{"v1a vector", headers("webhook-", id, ts, "v1,AAAA "+v1a), body, at, true},
		{"v1a, tampered body", headers("webhook-", id, ts, v1a), `{"test": 2432232315}`, at, false},
		{"v1a spelled v1", headers("webhook-", id, ts, "v1,"+strings.TrimPrefix(v1a, "v1a,")), body, at, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := verifyfuzz.StandardGenuine(tc.headers, []byte(tc.body), tc.now, 5*time.Minute, secret, public); got != tc.want {
				t.Errorf("StandardGenuine = %v, want %v", got, tc.want)
			}
		})
	}
}

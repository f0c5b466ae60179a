package stripe_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"

	"github.com/hookinbox/hookinbox/internal/verify/verifyfuzz"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
)

// FuzzStripeVerify holds stripe.Verifier to verifyfuzz.VerifierFuzz's
// property: no panic, nothing accepted that is not genuinely signed, every
// refusal a 4xx kind. make fuzz runs it for FUZZTIME.
func FuzzStripeVerify(f *testing.F) {
	s := &stripe.Verifier{Secrets: []string{secret, oldSecret}, Now: func() time.Time { return now }}
	fz := verifyfuzz.StripeFuzz(s.VerifyHeader, now, secret, oldSecret)
	fz.Seed(f, verifyfuzz.StripeBodies(f, now)...)
	body := verifytest.StripeEvent("checkout.session.completed", "evt_1", now)
	for _, header := range []string{
		stripe.SignatureHeader(body, now, otherSecret, secret),          // rotation: one of two v1 matches
		stripe.SignatureHeader(body, now, oldSecret),                    // the previous secret
		stripe.SignatureHeader(body, now.Add(-time.Hour), secret),       // stale
		stripe.SignatureHeader(body, now.Add(301*time.Second), secret),  // from the future
		fmt.Sprintf("t=%d,v0=%s", now.Unix(), sign(now, body, secret)),  // v0 only
		fmt.Sprintf("t=0%d,v1=%s", now.Unix(), sign(now, body, secret)), // a leading zero names the same second
		"t=1,v1=00",
	} {
		f.Add("stripe-signature: "+header, body, verifyfuzz.AsGiven, uint16(0))
	}
	f.Fuzz(fz.Check)
}

package verify_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/verify"
	"github.com/hookinbox/hookinbox/internal/verify/verifyfuzz"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// fuzzDeliveryID is the delivery id the fuzzers' genuine senders give a
// body: decided by the body, so the same body signs alike.
func fuzzDeliveryID(body []byte) string { return fmt.Sprintf("d-%x", sha256.Sum256(body))[:18] }

// fuzzBodies returns the fuzzers' starting bodies: the real Stripe payloads
// in the repository's testdata/stripe (its variants and thin notifications) and the hostile shapes
// the unit tests name. Further regression inputs live in
// testdata/fuzz/<FuzzName>/, as go test reads them.
func fuzzBodies(f *testing.F) [][]byte {
	f.Helper()
	_, bodies, err := verifytest.StripePayloads()
	if err != nil {
		f.Fatal(err)
	}
	_, thin, err := verifytest.StripeThinPayloads()
	if err != nil {
		f.Fatal(err)
	}
	bodies = append(bodies, thin...)
	return append(bodies,
		nil,
		[]byte("not json at all"),
		[]byte(`[1,2,3]`),
		[]byte(`{"object":"event","type":"checkout.session.completed","created":1}`),
		[]byte(`{"id":"../../etc/passwd","object":"event","type":"x"}`),
		[]byte(`{"id":"evt_1#evt_2","object":"event","type":"x"}`),
		[]byte(`{"id":"evt_`+strings.Repeat("a", 300)+`","object":"event","type":"x"}`),
		[]byte(`{"id":7,"object":"event","type":"x"}`),
		[]byte(`{"id":"evt_1","object":"charge","type":"x"}`),
		[]byte(`{"id":"evt_1","object":"event","type":""}`),
		verifytest.StripeEvent("charge.refunded", "evt_fuzz_refund", now, verifytest.WithSize(4096)),
	)
}

// FuzzStripeVerify holds verify.Stripe to verifyfuzz.VerifierFuzz's
// property: no panic, nothing accepted that is not genuinely signed, every
// refusal a 4xx kind. make fuzz runs it for FUZZTIME.
func FuzzStripeVerify(f *testing.F) {
	s := &verify.Stripe{Secrets: []string{secret, oldSecret}, Now: func() time.Time { return now }}
	fz := verifyfuzz.StripeFuzz(s.Verify, now, secret, oldSecret)
	fz.Seed(f, fuzzBodies(f)...)
	body := verifytest.StripeEvent("checkout.session.completed", "evt_1", now)
	for _, header := range []string{
		verifytest.SignStripe(body, now, otherSecret, secret),           // rotation: one of two v1 matches
		verifytest.SignStripe(body, now, oldSecret),                     // the previous secret
		verifytest.SignStripe(body, now.Add(-time.Hour), secret),        // stale
		verifytest.SignStripe(body, now.Add(301*time.Second), secret),   // from the future
		fmt.Sprintf("t=%d,v0=%s", now.Unix(), sign(now, body, secret)),  // v0 only
		fmt.Sprintf("t=0%d,v1=%s", now.Unix(), sign(now, body, secret)), // a leading zero names the same second
		"t=1,v1=00",
	} {
		f.Add("stripe-signature: "+header, body, verifyfuzz.AsGiven, uint16(0))
	}
	f.Fuzz(fz.Check)
}

// FuzzRotatingStripeVerify is FuzzStripeVerify for the verifier the
// receiver function runs: secrets loaded (here from a fixed list) and
// reloaded on a mismatch.
func FuzzRotatingStripeVerify(f *testing.F) {
	r := rotatingStripe(func(context.Context) ([]string, error) { return []string{secret, oldSecret}, nil },
		func() time.Time { return now })
	if err := r.Init(context.Background()); err != nil {
		f.Fatal(err)
	}
	verifyFn := func(header string, body []byte) (webhook.Event, error) {
		evs, err := r.Verify(context.Background(), stripeRequest(header, body))
		if err != nil {
			return webhook.Event{}, err
		}
		return evs[0], nil
	}
	fz := verifyfuzz.StripeFuzz(verifyFn, now, secret, oldSecret)
	fz.Seed(f, fuzzBodies(f)...)
	f.Fuzz(fz.Check)
}

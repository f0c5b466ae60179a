package receiverfn

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/platform/secrets/secretstest"
	"github.com/hookinbox/hookinbox/internal/verify/verifyfuzz"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// withStripe makes r verify Stripe deliveries, as the receiver builds it
// for a Secrets Manager secret, on r's clock.
func withStripe(r *rotatingVerifier) *rotatingVerifier {
	env := &provider.Env{Now: r.Secrets.Now}
	r.New = func(s []string) (provider.Verifier, error) { return stripe.Provider{}.Verifier(s, env) }
	return r
}

// rotatingStripe is withStripe on a rotatingVerifier with load and clock.
func rotatingStripe(load func(context.Context) ([]string, error), clock func() time.Time) *rotatingVerifier {
	return withStripe(&rotatingVerifier{Secrets: &secrets.Rotating{Load: load, Now: clock}})
}

// The secrets of the Stripe fuzzer.
const (
	secret    = "whsec_test_hookinbox_current_0123456789"
	oldSecret = "whsec_test_hookinbox_previous_987654321"
)

// stripeRequest is a delivery of body with the Stripe-Signature header.
func stripeRequest(header string, body []byte) webhook.Request {
	return webhook.Request{Method: "POST", Header: map[string]string{"stripe-signature": header}, Body: body}
}

func TestRotatingReloadsOnMismatch(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := now
	stored := []string{"whsec_old"}
	loads := 0
	r := withStripe(&rotatingVerifier{Secrets: &secrets.Rotating{
		Load: func(context.Context) ([]string, error) { loads++; return stored, nil },
		Now:  func() time.Time { return clock },
	}})
	ctx := context.Background()
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	body := verifytest.StripeEvent("checkout.session.completed", "evt_rot", now)
	sign := func(secret string) string { return stripe.SignatureHeader(body, clock, secret) }

	if _, err := r.Verify(ctx, stripeRequest(sign("whsec_old"), body)); err != nil {
		t.Fatalf("old secret: %v", err)
	}
	// The secret is rolled in Secrets Manager; within the interval a
	// mismatch does not reload (a flood of bad signatures is cheap).
	stored = []string{"whsec_new", "whsec_old"}
	if _, err := r.Verify(ctx, stripeRequest(sign("whsec_new"), body)); !errors.Is(err, provider.ErrBadSignature) {
		t.Fatalf("new secret within the interval: err = %v, want ErrBadSignature", err)
	}
	if loads != 1 {
		t.Fatalf("loads = %d, want 1", loads)
	}
	clock = clock.Add(secrets.DefaultMinInterval)
	if _, err := r.Verify(ctx, stripeRequest(sign("whsec_new"), body)); err != nil {
		t.Fatalf("new secret after the interval: %v", err)
	}
	if _, err := r.Verify(ctx, stripeRequest(sign("whsec_attacker"), body)); !errors.Is(err, provider.ErrBadSignature) {
		t.Errorf("attacker: err = %v, want ErrBadSignature", err)
	}
	if loads != 2 {
		t.Errorf("loads = %d, want 2 (one reload for the new secret, none for the attacker within the interval)", loads)
	}
}

func TestRotatingKeepsSecretsWhenReloadFails(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := now
	fail := false
	r := withStripe(&rotatingVerifier{Secrets: &secrets.Rotating{
		Load: func(context.Context) ([]string, error) {
			if fail {
				return nil, errors.New("AccessDenied")
			}
			return []string{"whsec_a"}, nil
		},
		Now: func() time.Time { return clock },
	}})
	ctx := context.Background()
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	fail = true
	clock = clock.Add(secrets.DefaultMinInterval) // within the max age
	body := verifytest.StripeEvent("checkout.session.completed", "evt_keep", clock)
	if _, err := r.Verify(ctx, stripeRequest(stripe.SignatureHeader(body, clock, "whsec_b"), body)); !errors.Is(err, provider.ErrBadSignature) {
		t.Errorf("mismatch with a failing reload: err = %v, want ErrBadSignature", err)
	}
	if _, err := r.Verify(ctx, stripeRequest(stripe.SignatureHeader(body, clock, "whsec_a"), body)); err != nil {
		t.Errorf("the loaded secret stopped working after a failed reload: %v", err)
	}
}

// A secret removed from Secrets Manager keeps matching the loaded secrets,
// so no mismatch reload happens: the maximum age ends it.
func TestRotatingRevokedSecretStopsWithinMaxAge(t *testing.T) {
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	stored := []string{"whsec_new", "whsec_old"}
	r := withStripe(&rotatingVerifier{Secrets: &secrets.Rotating{
		Load: func(context.Context) ([]string, error) { return stored, nil },
		Now:  func() time.Time { return clock },
	}})
	ctx := context.Background()
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	verifyWith := func(secret string) error {
		body := verifytest.StripeEvent("checkout.session.completed", "evt_revoke", clock)
		_, err := r.Verify(ctx, stripeRequest(stripe.SignatureHeader(body, clock, secret), body))
		return err
	}
	stored = []string{"whsec_new"} // the old secret is revoked
	clock = clock.Add(secrets.DefaultMaxAge - time.Second)
	if err := verifyWith("whsec_old"); err != nil {
		t.Fatalf("old secret within the max age: %v", err)
	}
	clock = clock.Add(time.Second)
	if err := verifyWith("whsec_old"); !errors.Is(err, provider.ErrBadSignature) {
		t.Errorf("revoked secret at the max age: err = %v, want ErrBadSignature", err)
	}
	if err := verifyWith("whsec_new"); err != nil {
		t.Errorf("current secret: %v", err)
	}
}

// Past the max age, secrets that cannot be loaded again are not used: a
// 5xx (Stripe retries) rather than a revoked secret that keeps working.
func TestRotatingFailsClosedWhenStale(t *testing.T) {
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var fail error
	loads := 0
	r := withStripe(&rotatingVerifier{Secrets: &secrets.Rotating{
		Load: func(context.Context) ([]string, error) {
			loads++
			return []string{"whsec_a"}, fail
		},
		MaxAge: 10 * time.Minute,
		Now:    func() time.Time { return clock },
	}})
	ctx := context.Background()
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	body := verifytest.StripeEvent("checkout.session.completed", "evt_stale", clock)
	verifyNow := func() error {
		_, err := r.Verify(ctx, stripeRequest(stripe.SignatureHeader(body, clock, "whsec_a"), body))
		return err
	}
	fail = errors.New("AccessDeniedException")
	clock = clock.Add(9 * time.Minute)
	if err := verifyNow(); err != nil || loads != 1 {
		t.Fatalf("within the configured max age: %v after %d loads, want nil after 1", err, loads)
	}
	clock = clock.Add(time.Minute)
	for range 3 {
		err := verifyNow()
		if !errors.Is(err, secrets.ErrStale) || errors.Is(err, webhook.ErrUnauthenticated) {
			t.Errorf("stale secrets: err = %v, want ErrSecretsStale and no webhook kind", err)
		}
	}
	if loads != 2 {
		t.Errorf("loads = %d, want 2: a failed load waits the reload interval", loads)
	}
	fail = nil
	clock = clock.Add(secrets.DefaultMinInterval)
	if err := verifyNow(); err != nil || loads != 3 {
		t.Errorf("after Secrets Manager recovered: %v after %d loads, want nil after 3", err, loads)
	}
}

func TestRotatingInitFails(t *testing.T) {
	r := withStripe(&rotatingVerifier{Secrets: secretstest.Static(" ")})
	if err := r.Init(context.Background()); err == nil {
		t.Error("Init accepted an empty secret")
	}
}

// A max age below the reload interval reloads at every use: the interval
// throttles only loads after a failure or a mismatch.
func TestRotatingMaxAgeBelowInterval(t *testing.T) {
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	loads := 0
	r := withStripe(&rotatingVerifier{Secrets: &secrets.Rotating{
		Load:   func(context.Context) ([]string, error) { loads++; return []string{"whsec_a"}, nil },
		MaxAge: time.Second,
		Now:    func() time.Time { return clock },
	}})
	ctx := context.Background()
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		clock = clock.Add(time.Second)
		body := verifytest.StripeEvent("checkout.session.completed", "evt_age", clock)
		if _, err := r.Verify(ctx, stripeRequest(stripe.SignatureHeader(body, clock, "whsec_a"), body)); err != nil || loads != i+2 {
			t.Fatalf("use %d: %v after %d loads, want nil after %d", i+1, err, loads, i+2)
		}
	}
}

// FuzzRotatingStripeVerify is FuzzStripeVerify for the verifier the
// receiver function runs: secrets loaded (here from a fixed list) and
// reloaded on a mismatch.
func FuzzRotatingStripeVerify(f *testing.F) {
	now := time.Date(2023, 11, 20, 13, 17, 41, 0, time.UTC)
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
	fz.Seed(f, verifyfuzz.StripeBodies(f, now)...)
	f.Fuzz(fz.Check)
}

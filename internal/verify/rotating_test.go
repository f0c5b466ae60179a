package verify_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/verify"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/internal/webhook"
)

// rotatingStripe is the Rotating verifier the receiver builds for Stripe
// from a Secrets Manager secret, on the clock.
func rotatingStripe(load func(context.Context) ([]string, error), clock func() time.Time) *verify.Rotating {
	spec, _ := verify.Lookup(verify.StripeProvider)
	return &verify.Rotating{
		Load: load,
		New:  func(s []string) (verify.Verifier, error) { return spec.New(s, verify.Options{Now: clock}) },
		Now:  clock,
	}
}

// stripeRequest is a delivery of body with the Stripe-Signature header.
func stripeRequest(header string, body []byte) webhook.Request {
	return webhook.Request{Method: "POST", Header: map[string]string{"stripe-signature": header}, Body: body}
}

func TestRotatingReloadsOnMismatch(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := now
	stored := []string{"whsec_old"}
	loads := 0
	r := rotatingStripe(func(context.Context) ([]string, error) { loads++; return stored, nil }, func() time.Time { return clock })
	ctx := context.Background()
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	body := verifytest.StripeEvent("checkout.session.completed", "evt_rot", now)
	sign := func(secret string) string { return verifytest.SignStripe(body, clock, secret) }

	if _, err := r.Verify(ctx, stripeRequest(sign("whsec_old"), body)); err != nil {
		t.Fatalf("old secret: %v", err)
	}
	// The secret is rolled in Secrets Manager; within the interval a
	// mismatch does not reload (a flood of bad signatures is cheap).
	stored = []string{"whsec_new", "whsec_old"}
	if _, err := r.Verify(ctx, stripeRequest(sign("whsec_new"), body)); !errors.Is(err, verify.ErrBadSignature) {
		t.Fatalf("new secret within the interval: err = %v, want ErrBadSignature", err)
	}
	if loads != 1 {
		t.Fatalf("loads = %d, want 1", loads)
	}
	clock = clock.Add(verify.DefaultReloadInterval)
	if _, err := r.Verify(ctx, stripeRequest(sign("whsec_new"), body)); err != nil {
		t.Fatalf("new secret after the interval: %v", err)
	}
	if _, err := r.Verify(ctx, stripeRequest(sign("whsec_attacker"), body)); !errors.Is(err, verify.ErrBadSignature) {
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
	r := rotatingStripe(func(context.Context) ([]string, error) {
		if fail {
			return nil, errors.New("AccessDenied")
		}
		return []string{"whsec_a"}, nil
	}, func() time.Time { return clock })
	ctx := context.Background()
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	fail = true
	clock = clock.Add(time.Hour)
	body := verifytest.StripeEvent("checkout.session.completed", "evt_keep", clock)
	if _, err := r.Verify(ctx, stripeRequest(verifytest.SignStripe(body, clock, "whsec_b"), body)); !errors.Is(err, verify.ErrBadSignature) {
		t.Errorf("mismatch with a failing reload: err = %v, want ErrBadSignature", err)
	}
	if _, err := r.Verify(ctx, stripeRequest(verifytest.SignStripe(body, clock, "whsec_a"), body)); err != nil {
		t.Errorf("the loaded secret stopped working after a failed reload: %v", err)
	}
}

func TestRotatingInitFails(t *testing.T) {
	r := rotatingStripe(func(context.Context) ([]string, error) { return []string{" "}, nil }, nil)
	if err := r.Init(context.Background()); err == nil {
		t.Error("Init accepted an empty secret")
	}
}

package verify_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/verify"
	"github.com/hookinbox/hookinbox/internal/verify/verifyfuzz"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// The Standard Webhooks reference libraries' test vector (the
// specification's and Svix's "verifying payloads manually" example).
const (
	stdVectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	stdVectorID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	stdVectorTS     = 1614265330
	stdVectorBody   = `{"test": 2432232314}`
	stdVectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func stdClock(t time.Time) func() time.Time { return func() time.Time { return t } }

func TestStandardReferenceVector(t *testing.T) {
	signedAt := time.Unix(stdVectorTS, 0)
	req := webhook.Request{Header: map[string]string{
		"webhook-id": stdVectorID, "webhook-timestamp": strconv.Itoa(stdVectorTS),
		// A rotating sender's second signature, under a secret we do not hold.
		"webhook-signature": "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= " + stdVectorSig,
	}, Body: []byte(stdVectorBody)}
	for _, secret := range []string{stdVectorSecret, strings.TrimPrefix(stdVectorSecret, "whsec_")} {
		s := &verify.Standard{Secrets: []string{secret}, Now: stdClock(signedAt.Add(10 * time.Second))}
		evs, err := s.Verify(context.Background(), req)
		if err != nil {
			t.Fatalf("secret %.10s...: %v", secret, err)
		}
		if len(evs) != 1 || evs[0].Key() != "standard#"+stdVectorID || !evs[0].Created.Equal(signedAt) {
			t.Fatalf("Verify = %+v", evs)
		}
	}
	// Our signer reproduces the vector too.
	if got := verifytest.StandardHeaders([]byte(stdVectorBody), stdVectorID, signedAt, stdVectorSecret)["webhook-signature"]; got != stdVectorSig {
		t.Errorf("StandardHeaders signature = %q, want %q", got, stdVectorSig)
	}
}

func TestStandardVerify(t *testing.T) {
	const secret = "whsec_c2VjcmV0LW9mLWhvb2tpbmJveC10ZXN0LWVuZHBvaW50"
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"type":"invoice.paid","timestamp":"2026-11-30T12:00:00Z","data":{"id":"inv_1"}}`)
	s := &verify.Standard{Secrets: []string{"whsec_b2xkLXNlY3JldA==", secret}, Now: stdClock(now)}
	ctx := context.Background()
	h := func(at time.Time, mut func(map[string]string)) webhook.Request {
		hd := verifytest.StandardHeaders(body, "msg_1", at, secret)
		mut(hd)
		return webhook.Request{Header: hd, Body: body}
	}
	evs, err := s.Verify(ctx, h(now, func(map[string]string) {}))
	if err != nil || evs[0].Type != "invoice.paid" || evs[0].Key() != "standard#msg_1" {
		t.Fatalf("Verify = %+v, %v", evs, err)
	}
	evs, err = s.Verify(ctx, h(now, func(m map[string]string) {
		for _, n := range []string{"id", "timestamp", "signature"} {
			m["svix-"+n] = m["webhook-"+n]
			delete(m, "webhook-"+n)
		}
	}))
	if err != nil || evs[0].Key() != "standard#msg_1" {
		t.Fatalf("svix- headers: %+v, %v", evs, err)
	}
	notJSON := []byte("not json")
	tests := []struct {
		name string
		req  webhook.Request
		want error
	}{
		{"forged", webhook.Request{Header: verifytest.StandardHeaders(body, "msg_1", now, "whsec_YXR0YWNrZXI="), Body: body}, verify.ErrBadSignature},
		{"no signature", h(now, func(m map[string]string) { delete(m, "webhook-signature") }), verify.ErrNoSignature},
		{"v1a only", h(now, func(m map[string]string) {
			m["webhook-signature"] = strings.Replace(m["webhook-signature"], "v1,", "v1a,", 1)
		}), verify.ErrNoSignature},
		{"no timestamp", h(now, func(m map[string]string) { delete(m, "webhook-timestamp") }), verify.ErrNoSignature},
		{"other id than signed", h(now, func(m map[string]string) { m["webhook-id"] = "msg_2" }), verify.ErrBadSignature},
		{"missing id header", webhook.Request{Header: verifytest.StandardHeaders(body, "", now, secret), Body: body}, verify.ErrNoEventID},
		{"stale timestamp", h(now.Add(-5*time.Minute-time.Second), func(map[string]string) {}), verify.ErrStale},
		{"future timestamp", h(now.Add(5*time.Minute+time.Second), func(map[string]string) {}), verify.ErrFuture},
		{"malformed body", webhook.Request{Header: verifytest.StandardHeaders(notJSON, "msg_1", now, secret), Body: notJSON}, verify.ErrNotJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Verify(ctx, tc.req); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	for _, at := range []time.Time{now.Add(-5 * time.Minute), now.Add(5 * time.Minute)} {
		if _, err := s.Verify(ctx, h(at, func(map[string]string) {})); err != nil {
			t.Errorf("timestamp exactly 5 minutes away (%s): %v", at.Sub(now), err)
		}
	}
	if err := (&verify.Standard{Secrets: []string{"whsec_%%%"}}).Validate(); err == nil {
		t.Error("Validate accepted a secret that is not base64")
	}
}

// FuzzStandardVerify holds verify.Standard to verifyfuzz.VerifierFuzz's
// property (see FuzzGitHubVerify), on a clock at the reference vector's
// time, with svix- headers in play.
func FuzzStandardVerify(f *testing.F) {
	at := time.Unix(stdVectorTS, 0)
	s := &verify.Standard{Secrets: []string{stdVectorSecret}, Now: stdClock(at)}
	fz := verifyfuzz.FromRequestVerifier("standard", s.Verify,
		func(b []byte) map[string]string {
			return verifytest.StandardHeaders(b, fuzzDeliveryID(b), at, stdVectorSecret)
		},
		func(h map[string]string, b []byte) bool {
			return verifyfuzz.StandardGenuine(h, b, at, verify.StandardTolerance, stdVectorSecret)
		})
	fz.Seed(f, []byte(stdVectorBody), []byte(`{"type":"invoice.paid"}`), nil)
	vector := "webhook-id: " + stdVectorID + "\nwebhook-timestamp: " + strconv.Itoa(stdVectorTS) + "\nwebhook-signature: "
	f.Add(vector+stdVectorSig, []byte(stdVectorBody), verifyfuzz.AsGiven, uint16(0))
	f.Add(vector+"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OF= v1a,xyz", []byte(stdVectorBody), verifyfuzz.AsGiven, uint16(0))
	f.Add(strings.ReplaceAll(vector, "webhook-", "svix-")+stdVectorSig, []byte(stdVectorBody), verifyfuzz.AsGiven, uint16(0))
	f.Fuzz(fz.Check)
}

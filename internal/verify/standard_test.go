package verify_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/verify"
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

// FuzzStandardVerify: no panic, every error wraps a webhook kind, nothing
// accepted without a v1 signature an independent HMAC reproduces.
func FuzzStandardVerify(f *testing.F) {
	f.Add(stdVectorID, strconv.Itoa(stdVectorTS), stdVectorSig, []byte(stdVectorBody))
	f.Add("msg_1", "1", "v1,AAAA", []byte(`{}`))
	f.Add("", "", "", []byte(nil))
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(stdVectorSecret, "whsec_"))
	s := &verify.Standard{Secrets: []string{stdVectorSecret}, Now: stdClock(time.Unix(stdVectorTS, 0))}
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		evs, err := s.Verify(context.Background(), webhook.Request{Header: map[string]string{
			"webhook-id": id, "webhook-timestamp": ts, "webhook-signature": sig,
		}, Body: body})
		if err != nil {
			if !errors.Is(err, webhook.ErrUnauthenticated) && !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("error %v wraps no webhook kind", err)
			}
			return
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(strings.TrimSpace(id) + "." + strings.TrimSpace(ts) + "." + string(body)))
		want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
		found := false
		for _, part := range strings.Fields(sig) {
			if p, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(part, "v1,")); strings.HasPrefix(part, "v1,") &&
				hmac.Equal(p, m.Sum(nil)) {
				found = true
			}
		}
		if !found {
			t.Fatalf("accepted a delivery the secret did not sign: %q, want %q among them", sig, want)
		}
		if len(evs) != 1 || webhook.ValidateEventID(evs[0].ID) != nil {
			t.Fatalf("Verify = %+v", evs)
		}
	})
}

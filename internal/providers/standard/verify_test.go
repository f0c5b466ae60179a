package standard_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/standard"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/hookinbox/hookinbox/internal/verify/verifyfuzz"
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
		s := &standard.Verifier{Secrets: []string{secret}, Now: stdClock(signedAt.Add(10 * time.Second))}
		evs, err := s.Verify(context.Background(), req)
		if err != nil {
			t.Fatalf("secret %.10s...: %v", secret, err)
		}
		if len(evs) != 1 || evs[0].Key() != "standard#"+stdVectorID || !evs[0].Created.Equal(signedAt) {
			t.Fatalf("Verify = %+v", evs)
		}
	}
	// Our signer reproduces the vector too.
	if got := standard.Headers([]byte(stdVectorBody), stdVectorID, signedAt, stdVectorSecret)["webhook-signature"]; got != stdVectorSig {
		t.Errorf("StandardHeaders signature = %q, want %q", got, stdVectorSig)
	}
}

func TestStandardVerify(t *testing.T) {
	const secret = "whsec_c2VjcmV0LW9mLWhvb2tpbmJveC10ZXN0LWVuZHBvaW50"
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"type":"invoice.paid","timestamp":"2026-11-30T12:00:00Z","data":{"id":"inv_1"}}`)
	s := &standard.Verifier{Secrets: []string{"whsec_b2xkLXNlY3JldA==", secret}, Now: stdClock(now)}
	ctx := context.Background()
	h := func(at time.Time, mut func(map[string]string)) webhook.Request {
		hd := standard.Headers(body, "msg_1", at, secret)
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
		{"forged", webhook.Request{Header: standard.Headers(body, "msg_1", now, "whsec_YXR0YWNrZXI="), Body: body}, provider.ErrBadSignature},
		{"no signature", h(now, func(m map[string]string) { delete(m, "webhook-signature") }), provider.ErrNoSignature},
		{"v1a only", h(now, func(m map[string]string) {
			m["webhook-signature"] = strings.Replace(m["webhook-signature"], "v1,", "v1a,", 1)
		}), provider.ErrNoSignature},
		{"no timestamp", h(now, func(m map[string]string) { delete(m, "webhook-timestamp") }), provider.ErrNoSignature},
		{"other id than signed", h(now, func(m map[string]string) { m["webhook-id"] = "msg_2" }), provider.ErrBadSignature},
		{"missing id header", webhook.Request{Header: standard.Headers(body, "", now, secret), Body: body}, provider.ErrNoEventID},
		{"stale timestamp", h(now.Add(-5*time.Minute-time.Second), func(map[string]string) {}), provider.ErrStale},
		{"future timestamp", h(now.Add(5*time.Minute+time.Second), func(map[string]string) {}), provider.ErrFuture},
		{"malformed body", webhook.Request{Header: standard.Headers(notJSON, "msg_1", now, secret), Body: notJSON}, provider.ErrNotJSON},
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
	if err := (&standard.Verifier{Secrets: []string{"whsec_%%%"}}).Validate(); err == nil {
		t.Error("Validate accepted a secret that is not base64")
	}
}

// The reference libraries' v1a (ed25519) vector: the Go library's
// TestAsymmetricWebhookSign signs the symmetric vector's message with this
// 32-byte seed (base64 of "TESTSIGNINGKEYDONOTUSETHISFORANY").
const (
	stdV1aSeed = "VEVTVFNJR05JTkdLRVlET05PVFVTRVRISVNGT1JBTlk="
	stdV1aSig  = "v1a,tQ9V2XOqn7jL/DQenEFpqIugdBVtiMmER5mhSkXBNwM0mkATuDe6KYYUuxqtaiHeYGb7KaaBRdM5WqyeFiL8Ag=="
)

// whpk returns the whpk_ public key of a seed, with crypto/ed25519 alone.
func whpk(seed []byte) string {
	return "whpk_" + base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
}

func TestStandardV1aReferenceVector(t *testing.T) {
	seed, err := base64.StdEncoding.DecodeString(stdV1aSeed)
	if err != nil {
		t.Fatal(err)
	}
	signedAt := time.Unix(stdVectorTS, 0)
	req := webhook.Request{Header: map[string]string{
		"webhook-id": stdVectorID, "webhook-timestamp": strconv.Itoa(stdVectorTS),
		// A v1 signature under a secret we do not hold beside it.
		"webhook-signature": "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= " + stdV1aSig,
	}, Body: []byte(stdVectorBody)}
	for name, secrets := range map[string][]string{
		"public key only":        {whpk(seed)},
		"beside a whsec_ secret": {"whsec_b2xkLXNlY3JldA==", whpk(seed)},
	} {
		s := &standard.Verifier{Secrets: secrets, Now: stdClock(signedAt.Add(10 * time.Second))}
		evs, err := s.Verify(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(evs) != 1 || evs[0].Key() != "standard#"+stdVectorID || !evs[0].Created.Equal(signedAt) {
			t.Fatalf("%s: Verify = %+v", name, evs)
		}
	}
	// Our signer reproduces the vector (ed25519 signatures are
	// deterministic), and derives the same public key.
	if got := standard.Headers([]byte(stdVectorBody), stdVectorID, signedAt, "whsk_"+stdV1aSeed)["webhook-signature"]; got != stdV1aSig {
		t.Errorf("StandardHeaders v1a signature = %q, want %q", got, stdV1aSig)
	}
	if got := standard.PublicKey("whsk_" + stdV1aSeed); got != whpk(seed) {
		t.Errorf("StandardPublicKey = %q, want %q", got, whpk(seed))
	}
}

func TestStandardV1a(t *testing.T) {
	const hmacSecret = "whsec_c2VjcmV0LW9mLWhvb2tpbmJveC10ZXN0LWVuZHBvaW50"
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	body := []byte(`{"type":"invoice.paid","timestamp":"2026-11-30T12:00:00Z","data":{"id":"inv_1"}}`)
	seedOld, seedNew, seedAttacker := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32), bytes.Repeat([]byte{3}, 32)
	whsk := func(seed []byte) string { return "whsk_" + base64.StdEncoding.EncodeToString(seed) }
	// Rotating: the old and the new public key, and a symmetric secret.
	s := &standard.Verifier{Secrets: []string{whpk(seedOld), whpk(seedNew), hmacSecret}, Now: stdClock(now)}
	ctx := context.Background()
	h := func(at time.Time, mut func(map[string]string), keys ...string) webhook.Request {
		hd := standard.Headers(body, "msg_1", at, keys...)
		mut(hd)
		return webhook.Request{Header: hd, Body: body}
	}
	same := func(map[string]string) {}
	for name, req := range map[string]webhook.Request{
		"v1a under the new key":            h(now, same, whsk(seedNew)),
		"v1a under the old key":            h(now, same, whsk(seedOld)),
		"v1 and v1a in one header":         h(now, same, hmacSecret, whsk(seedNew)),
		"a forged v1 beside a genuine v1a": h(now, same, "whsec_YXR0YWNrZXI=", whsk(seedNew)),
		"a forged v1a beside a genuine v1": h(now, same, whsk(seedAttacker), hmacSecret),
		"svix- headers": h(now, func(m map[string]string) {
			m["svix-signature"] = m["webhook-signature"]
			delete(m, "webhook-signature")
		}, whsk(seedNew)),
		"a 64-byte private key signs the same":   h(now, same, "whsk_"+base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(seedNew))),
		"a public key in the signer's list only": h(now, same, whpk(seedAttacker), whsk(seedNew)),
		"the genuine v1a last of the most allowed": h(now, func(m map[string]string) {
			m["webhook-signature"] = strings.Repeat(standard.Headers(body, "msg_1", now, whsk(seedAttacker))["webhook-signature"]+" ", standard.MaxV1a-1) + m["webhook-signature"]
		}, whsk(seedNew)),
	} {
		evs, err := s.Verify(ctx, req)
		if err != nil || len(evs) != 1 || evs[0].Key() != "standard#msg_1" || evs[0].Type != "invoice.paid" {
			t.Errorf("%s: Verify = %+v, %v", name, evs, err)
		}
	}

	only := &standard.Verifier{Secrets: []string{whpk(seedNew)}, Now: stdClock(now)}
	notJSON := []byte("not json")
	tests := []struct {
		name string
		v    *standard.Verifier
		req  webhook.Request
		want error
	}{
		{"another key", s, h(now, same, whsk(seedAttacker)), provider.ErrBadSignature},
		{"v1 only, public keys only", only, h(now, same, hmacSecret), provider.ErrNoSignature},
		{"v1a only, whsec_ only", &standard.Verifier{Secrets: []string{hmacSecret}, Now: stdClock(now)}, h(now, same, whsk(seedNew)), provider.ErrNoSignature},
		{"other id than signed", only, h(now, func(m map[string]string) { m["webhook-id"] = "msg_2" }, whsk(seedNew)), provider.ErrBadSignature},
		{"other timestamp than signed", only, h(now, func(m map[string]string) { m["webhook-timestamp"] = strconv.FormatInt(now.Unix()+1, 10) }, whsk(seedNew)), provider.ErrBadSignature},
		{"truncated signature", only, h(now, func(m map[string]string) { m["webhook-signature"] = m["webhook-signature"][:40] }, whsk(seedNew)), provider.ErrBadSignature},
		{"empty v1a", only, h(now, func(m map[string]string) { m["webhook-signature"] = "v1a," }, whsk(seedNew)), provider.ErrBadSignature},
		{"a genuine v1a among too many", only, h(now, func(m map[string]string) {
			m["webhook-signature"] = strings.Repeat(standard.Headers(body, "msg_1", now, whsk(seedAttacker))["webhook-signature"]+" ", standard.MaxV1a) + m["webhook-signature"]
		}, whsk(seedNew)), provider.ErrNoSignature},
		{"tampered body", only, webhook.Request{Header: standard.Headers(body, "msg_1", now, whsk(seedNew)), Body: append([]byte(" "), body...)}, provider.ErrBadSignature},
		{"stale timestamp", only, h(now.Add(-5*time.Minute-time.Second), same, whsk(seedNew)), provider.ErrStale},
		{"future timestamp", only, h(now.Add(5*time.Minute+time.Second), same, whsk(seedNew)), provider.ErrFuture},
		{"malformed body", only, webhook.Request{Header: standard.Headers(notJSON, "msg_1", now, whsk(seedNew)), Body: notJSON}, provider.ErrNotJSON},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.v.Verify(ctx, tc.req); !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}

	for name, secret := range map[string]string{
		"a private signing key":   whsk(seedNew),
		"a 31-byte public key":    "whpk_" + base64.StdEncoding.EncodeToString(make([]byte, 31)),
		"a public key not base64": "whpk_%%%",
	} {
		err := (&standard.Verifier{Secrets: []string{hmacSecret, secret}}).Validate()
		if err == nil {
			t.Errorf("Validate accepted %s", name)
		} else if strings.Contains(err.Error(), strings.TrimPrefix(strings.TrimPrefix(secret, "whsk_"), "whpk_")) {
			t.Errorf("Validate's error names the secret: %v", err)
		}
	}
}

// FuzzStandardVerify holds standard.Verifier to verifyfuzz.VerifierFuzz's
// property (see FuzzGitHubVerify), on a clock at the reference vector's
// time, with svix- headers in play.
func FuzzStandardVerify(f *testing.F) {
	at := time.Unix(stdVectorTS, 0)
	public := standard.PublicKey("whsk_" + stdV1aSeed)
	s := &standard.Verifier{Secrets: []string{stdVectorSecret, public}, Now: stdClock(at)}
	fz := verifyfuzz.FromRequestVerifier("standard", s.Verify,
		func(b []byte) map[string]string {
			return standard.Headers(b, verifyfuzz.DeliveryID(b), at, stdVectorSecret, "whsk_"+stdV1aSeed)
		},
		func(h map[string]string, b []byte) bool {
			return verifyfuzz.StandardGenuine(h, b, at, standard.Tolerance, stdVectorSecret, public)
		})
	fz.Seed(f, []byte(stdVectorBody), []byte(`{"type":"invoice.paid"}`), nil)
	vector := "webhook-id: " + stdVectorID + "\nwebhook-timestamp: " + strconv.Itoa(stdVectorTS) + "\nwebhook-signature: "
	f.Add(vector+stdVectorSig, []byte(stdVectorBody), verifyfuzz.AsGiven, uint16(0))
	f.Add(vector+"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OF= v1a,xyz", []byte(stdVectorBody), verifyfuzz.AsGiven, uint16(0))
	f.Add(strings.ReplaceAll(vector, "webhook-", "svix-")+stdVectorSig, []byte(stdVectorBody), verifyfuzz.AsGiven, uint16(0))
	f.Add(vector+stdV1aSig, []byte(stdVectorBody), verifyfuzz.AsGiven, uint16(0))
	f.Add(vector+"v1a,"+strings.Repeat("A", 86)+"== "+stdV1aSig[:40], []byte(stdVectorBody), verifyfuzz.AsGiven, uint16(0))
	f.Fuzz(fz.Check)
}

// TestSignedHeadersInPartsSignTheJoinedBody: a body given in parts is
// signed as the same body whole, with a v1 (HMAC, written part by part)
// and a v1a (ed25519) secret; no part is copied into the headers.
func TestSignedHeadersInPartsSignTheJoinedBody(t *testing.T) {
	at := time.Unix(1_777_000_000, 0)
	secrets := []string{stdVectorSecret, "whsk_" + stdV1aSeed}
	parts := [][]byte{[]byte(`{"id":"msg_1","payload":`), []byte(`{"note":"<b>&</b>"}`), []byte(`}`)}
	got, err := standard.SignedHeaders("msg_1", at, secrets, parts...)
	if err != nil {
		t.Fatal(err)
	}
	if want := standard.Headers(bytes.Join(parts, nil), "msg_1", at, secrets...); !maps.Equal(want, got) {
		t.Errorf("SignedHeaders in parts = %v; want %v, as for the joined body", got, want)
	}
}

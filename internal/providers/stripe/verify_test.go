package stripe_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"

	stripewebhook "github.com/stripe/stripe-go/v76/webhook"

	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

const (
	secret      = "whsec_test_hookinbox_current_0123456789"
	oldSecret   = "whsec_test_hookinbox_previous_987654321"
	otherSecret = "whsec_test_someone_elses_endpoint_00000"
)

var now = time.Date(2023, 11, 20, 13, 17, 41, 0, time.UTC)

// sign returns the v1 signature of body at t under secret, hex-encoded, the
// way stripe-go computes it.
func sign(t time.Time, body []byte, secret string) string {
	return hex.EncodeToString(stripewebhook.ComputeSignature(t, body, secret))
}

func TestStripeVerify(t *testing.T) {
	body := verifytest.StripeEvent("checkout.session.completed", "evt_1OEa2nLkdIwHu7ixQnXZgA6E", now.Add(-2*time.Second),
		verifytest.WithEmail("jenny.rosen@example.com"))
	tampered := bytes.Clone(body)
	tampered[len(tampered)/2] ^= 0x01
	otherVersion := verifytest.StripeEvent("customer.subscription.updated", "evt_1OEbK4LkdIwHu7ixZ7mTqV2c", now,
		verifytest.WithAPIVersion("2019-02-19"))
	longID := []byte(`{"id":"evt_` + strings.Repeat("a", 296) + `","object":"event","type":"charge.succeeded"}`)
	unsignedGarbage := []byte("\x00\xffnot json at all")
	signed := func(b []byte, at time.Time) string { return stripe.SignatureHeader(b, at, secret) }

	tests := []struct {
		name      string
		secrets   []string
		tolerance time.Duration
		header    string
		body      []byte
		wantErr   error // the verify sentinel; nil for success
		wantKind  error // the webhook kind it must also match
		wantID    string
		wantType  string
	}{
		{
			name:     "valid single secret",
			header:   signed(body, now),
			body:     body,
			wantID:   "evt_1OEa2nLkdIwHu7ixQnXZgA6E",
			wantType: "checkout.session.completed",
		},
		{
			name:     "valid with the second of two secrets (rotation)",
			secrets:  []string{oldSecret, secret},
			header:   stripe.SignatureHeader(body, now, secret),
			body:     body,
			wantID:   "evt_1OEa2nLkdIwHu7ixQnXZgA6E",
			wantType: "checkout.session.completed",
		},
		{
			name:     "valid with the first of two secrets (rotation)",
			secrets:  []string{oldSecret, secret},
			header:   stripe.SignatureHeader(body, now, oldSecret),
			body:     body,
			wantID:   "evt_1OEa2nLkdIwHu7ixQnXZgA6E",
			wantType: "checkout.session.completed",
		},
		{
			name:     "two v1 signatures, only the second matches",
			header:   stripe.SignatureHeader(body, now, otherSecret, secret),
			body:     body,
			wantID:   "evt_1OEa2nLkdIwHu7ixQnXZgA6E",
			wantType: "checkout.session.completed",
		},
		{
			name:     "v1 and v0 signatures, spaces around parts",
			header:   fmt.Sprintf("t=%d, v1=%s, v0=%s", now.Unix(), sign(now, body, secret), sign(now, body, "v0")),
			body:     body,
			wantID:   "evt_1OEa2nLkdIwHu7ixQnXZgA6E",
			wantType: "checkout.session.completed",
		},
		{
			name:     "unparsable v1 signatures are skipped",
			header:   fmt.Sprintf("t=%d,v1=zz,v1=abcd,v1=%s", now.Unix(), sign(now, body, secret)),
			body:     body,
			wantID:   "evt_1OEa2nLkdIwHu7ixQnXZgA6E",
			wantType: "checkout.session.completed",
		},
		{
			name:     "v0 only is no signature",
			header:   fmt.Sprintf("t=%d,v0=%s", now.Unix(), sign(now, body, secret)),
			body:     body,
			wantErr:  provider.ErrNoSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "no header",
			header:   "",
			body:     body,
			wantErr:  provider.ErrNoSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "empty header (blank)",
			header:   " \t ",
			body:     body,
			wantErr:  provider.ErrNoSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "header of commas only",
			header:   ",,,",
			body:     body,
			wantErr:  provider.ErrNoSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "header t= only",
			header:   fmt.Sprintf("t=%d", now.Unix()),
			body:     body,
			wantErr:  provider.ErrNoSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "header without t= but a signature stripe-go would check against year 1",
			header:   "v1=" + sign(time.Time{}, body, secret),
			body:     body,
			wantErr:  provider.ErrNoSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "header with two t=",
			header:   fmt.Sprintf("t=%d,t=%d,v1=%s", now.Unix(), now.Unix(), sign(now, body, secret)),
			body:     body,
			wantErr:  provider.ErrNoSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "header with non-numeric t=",
			header:   fmt.Sprintf("t=yesterday,v1=%s", sign(now, body, secret)),
			body:     body,
			wantErr:  provider.ErrNoSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "header of garbage",
			header:   "garbage;not a stripe header",
			body:     body,
			wantErr:  provider.ErrNoSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "header of binary garbage",
			header:   "t=\x00\xff,v1=\x01",
			body:     body,
			wantErr:  provider.ErrNoSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "wrong secret",
			header:   stripe.SignatureHeader(body, now, otherSecret),
			body:     body,
			wantErr:  provider.ErrBadSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "signed with one secret prefix of ours",
			header:   stripe.SignatureHeader(body, now, secret[:len(secret)-1]),
			body:     body,
			wantErr:  provider.ErrBadSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "tampered body (one bit of one byte)",
			header:   signed(body, now),
			body:     tampered,
			wantErr:  provider.ErrBadSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "body with a trailing newline added",
			header:   signed(body, now),
			body:     append(bytes.Clone(body), '\n'),
			wantErr:  provider.ErrBadSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "timestamp changed in a valid header",
			header:   strings.Replace(signed(body, now), fmt.Sprint(now.Unix()), fmt.Sprint(now.Unix()-1), 1),
			body:     body,
			wantErr:  provider.ErrBadSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "stale (tolerance + 1s old)",
			header:   signed(body, now.Add(-stripewebhook.DefaultTolerance-time.Second)),
			body:     body,
			wantErr:  provider.ErrStale,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "future (tolerance + 1s ahead)",
			header:   signed(body, now.Add(stripewebhook.DefaultTolerance+time.Second)),
			body:     body,
			wantErr:  provider.ErrFuture,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "exactly tolerance old is accepted",
			header:   signed(body, now.Add(-stripewebhook.DefaultTolerance)),
			body:     body,
			wantID:   "evt_1OEa2nLkdIwHu7ixQnXZgA6E",
			wantType: "checkout.session.completed",
		},
		{
			name:     "exactly tolerance ahead is accepted",
			header:   signed(body, now.Add(stripewebhook.DefaultTolerance)),
			body:     body,
			wantID:   "evt_1OEa2nLkdIwHu7ixQnXZgA6E",
			wantType: "checkout.session.completed",
		},
		{
			name:     "stale and wrongly signed is a bad signature (signature first)",
			header:   stripe.SignatureHeader(body, now.Add(-time.Hour), otherSecret),
			body:     body,
			wantErr:  provider.ErrBadSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "t= far in the future does not overflow",
			header:   fmt.Sprintf("t=%d,v1=%s", int64(1)<<62, sign(time.Unix(1<<62, 0), body, secret)),
			body:     body,
			wantErr:  provider.ErrFuture,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "t= far in the past does not overflow",
			header:   fmt.Sprintf("t=%d,v1=%s", -(int64(1) << 62), sign(time.Unix(-(1<<62), 0), body, secret)),
			body:     body,
			wantErr:  provider.ErrStale,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:      "custom tolerance: 11s old with 10s tolerance is stale",
			tolerance: 10 * time.Second,
			header:    signed(body, now.Add(-11*time.Second)),
			body:      body,
			wantErr:   provider.ErrStale,
			wantKind:  webhook.ErrUnauthenticated,
		},
		{
			name:      "custom tolerance: 11s ahead with 10s tolerance is future",
			tolerance: 10 * time.Second,
			header:    signed(body, now.Add(11*time.Second)),
			body:      body,
			wantErr:   provider.ErrFuture,
			wantKind:  webhook.ErrUnauthenticated,
		},
		{
			name:      "custom tolerance: 10s old with 10s tolerance is accepted",
			tolerance: 10 * time.Second,
			header:    signed(body, now.Add(-10*time.Second)),
			body:      body,
			wantID:    "evt_1OEa2nLkdIwHu7ixQnXZgA6E",
			wantType:  "checkout.session.completed",
		},
		{
			name:      "custom tolerance: 1h old with 2h tolerance is accepted",
			tolerance: 2 * time.Hour,
			header:    signed(body, now.Add(-time.Hour)),
			body:      body,
			wantID:    "evt_1OEa2nLkdIwHu7ixQnXZgA6E",
			wantType:  "checkout.session.completed",
		},
		{
			name:     "api_version other than stripe-go's is accepted",
			header:   signed(otherVersion, now),
			body:     otherVersion,
			wantID:   "evt_1OEbK4LkdIwHu7ixZ7mTqV2c",
			wantType: "customer.subscription.updated",
		},
		{
			name:     "minimal event without object",
			header:   signed([]byte(`{"id":"evt_1","type":"ping"}`), now),
			body:     []byte(`{"id":"evt_1","type":"ping"}`),
			wantID:   "evt_1",
			wantType: "ping",
		},
		{
			name:     "unsigned garbage body is unauthenticated, not malformed",
			header:   "",
			body:     unsignedGarbage,
			wantErr:  provider.ErrNoSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "wrongly signed garbage body is unauthenticated, not malformed",
			header:   stripe.SignatureHeader(unsignedGarbage, now, otherSecret),
			body:     unsignedGarbage,
			wantErr:  provider.ErrBadSignature,
			wantKind: webhook.ErrUnauthenticated,
		},
		{
			name:     "signed non-JSON",
			header:   signed(unsignedGarbage, now),
			body:     unsignedGarbage,
			wantErr:  provider.ErrNotJSON,
			wantKind: webhook.ErrMalformed,
		},
		{
			name:     "signed empty body",
			header:   signed(nil, now),
			body:     nil,
			wantErr:  provider.ErrNotJSON,
			wantKind: webhook.ErrMalformed,
		},
		{
			name:     "signed JSON null",
			header:   signed([]byte("null"), now),
			body:     []byte("null"),
			wantErr:  provider.ErrNotJSON,
			wantKind: webhook.ErrMalformed,
		},
		{
			name:     "signed JSON array",
			header:   signed([]byte(`[{"id":"evt_1","type":"ping"}]`), now),
			body:     []byte(`[{"id":"evt_1","type":"ping"}]`),
			wantErr:  provider.ErrNotJSON,
			wantKind: webhook.ErrMalformed,
		},
		{
			name:     "signed truncated JSON",
			header:   signed(body[:len(body)-1], now),
			body:     body[:len(body)-1],
			wantErr:  provider.ErrNotJSON,
			wantKind: webhook.ErrMalformed,
		},
		{
			name:     "signed JSON without id",
			header:   signed([]byte(`{"object":"event","type":"ping"}`), now),
			body:     []byte(`{"object":"event","type":"ping"}`),
			wantErr:  provider.ErrNoEventID,
			wantKind: webhook.ErrMalformed,
		},
		{
			name:     "signed JSON with an id of 300 bytes",
			header:   signed(longID, now),
			body:     longID,
			wantErr:  provider.ErrBadEventID,
			wantKind: webhook.ErrMalformed,
		},
		{
			name:     "signed JSON with an id holding ../",
			header:   signed([]byte(`{"id":"evt_../../etc","object":"event","type":"ping"}`), now),
			body:     []byte(`{"id":"evt_../../etc","object":"event","type":"ping"}`),
			wantErr:  provider.ErrBadEventID,
			wantKind: webhook.ErrMalformed,
		},
		{
			name:     "signed JSON with a numeric id",
			header:   signed([]byte(`{"id":42,"object":"event","type":"ping"}`), now),
			body:     []byte(`{"id":42,"object":"event","type":"ping"}`),
			wantErr:  provider.ErrBadEventID,
			wantKind: webhook.ErrMalformed,
		},
		{
			name:     "signed JSON without type",
			header:   signed([]byte(`{"id":"evt_1","object":"event"}`), now),
			body:     []byte(`{"id":"evt_1","object":"event"}`),
			wantErr:  provider.ErrNotEvent,
			wantKind: webhook.ErrMalformed,
		},
		{
			name:     "signed JSON of another object",
			header:   signed([]byte(`{"id":"cus_1","object":"customer","type":"x"}`), now),
			body:     []byte(`{"id":"cus_1","object":"customer","type":"x"}`),
			wantErr:  provider.ErrNotEvent,
			wantKind: webhook.ErrMalformed,
		},
		{
			name:     "signed JSON with a string created",
			header:   signed([]byte(`{"id":"evt_1","type":"ping","created":"today"}`), now),
			body:     []byte(`{"id":"evt_1","type":"ping","created":"today"}`),
			wantErr:  provider.ErrNotEvent,
			wantKind: webhook.ErrMalformed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			secrets := tc.secrets
			if secrets == nil {
				secrets = []string{secret}
			}
			v := &stripe.Verifier{Secrets: secrets, Tolerance: tc.tolerance, Now: func() time.Time { return now }}
			got, err := v.VerifyHeader(tc.header, tc.body)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Verify() error = %v, want %v", err, tc.wantErr)
				}
				if !errors.Is(err, tc.wantKind) {
					t.Fatalf("Verify() error = %v, want kind %v", err, tc.wantKind)
				}
				checkErrorText(t, err, tc.header, tc.body)
				if got.ID != "" || got.Raw != nil {
					t.Errorf("Verify() returned event %q with error", got.ID)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify() error = %v, want nil", err)
			}
			if got, want := got.Provider, "stripe"; got != want {
				t.Errorf("Provider = %q, want %q", got, want)
			}
			if got, want := got.ID, tc.wantID; got != want {
				t.Errorf("ID = %q, want %q", got, want)
			}
			if got, want := got.Type, tc.wantType; got != want {
				t.Errorf("Type = %q, want %q", got, want)
			}
			if !bytes.Equal(got.Raw, tc.body) {
				t.Errorf("Raw differs from the signed body")
			}
		})
	}
}

// checkErrorText fails if err's text leaks a secret, a signature or the
// body.
func checkErrorText(t *testing.T, err error, header string, body []byte) {
	t.Helper()
	msg := err.Error()
	for _, s := range []string{secret, oldSecret, otherSecret} {
		if strings.Contains(msg, s) {
			t.Errorf("error %q holds a secret", msg)
		}
	}
	for part := range strings.SplitSeq(header, ",") {
		if _, sig, ok := strings.Cut(part, "v1="); ok && len(sig) >= 8 && strings.Contains(msg, sig) {
			t.Errorf("error %q holds a signature", msg)
		}
	}
	for _, leak := range []string{"jenny", "../", "aaaaaaaa", "today", "customer\""} {
		if bytes.Contains(body, []byte(leak)) && strings.Contains(msg, leak) {
			t.Errorf("error %q holds payload content %q", msg, leak)
		}
	}
}

func TestStripeVerifyEvent(t *testing.T) {
	created := now.Add(-3 * time.Second)
	tests := []struct {
		name string
		body []byte
		want webhook.Event
	}{
		{
			name: "test mode",
			body: verifytest.StripeEvent("invoice.paid", "evt_1", created),
			want: webhook.Event{Provider: "stripe", ID: "evt_1", Type: "invoice.paid", Created: created},
		},
		{
			name: "live mode",
			body: verifytest.StripeEvent("invoice.paid", "evt_2", created, verifytest.WithLivemode(true)),
			want: webhook.Event{Provider: "stripe", ID: "evt_2", Type: "invoice.paid", Created: created, Livemode: true},
		},
		{
			name: "no created",
			body: []byte(`{"id":"evt_3","type":"ping"}`),
			want: webhook.Event{Provider: "stripe", ID: "evt_3", Type: "ping"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := &stripe.Verifier{Secrets: []string{secret}, Now: func() time.Time { return now }}
			got, err := v.VerifyHeader(stripe.SignatureHeader(tc.body, now, secret), tc.body)
			if err != nil {
				t.Fatalf("Verify() error = %v", err)
			}
			tc.want.Raw = tc.body
			if got.Provider != tc.want.Provider || got.ID != tc.want.ID || got.Type != tc.want.Type ||
				!got.Created.Equal(tc.want.Created) || got.Livemode != tc.want.Livemode || !bytes.Equal(got.Raw, tc.want.Raw) {
				t.Errorf("Verify() = %+v,\nwant %+v", got, tc.want)
			}
			if got, want := got.Key(), webhook.NewKey("stripe", tc.want.ID); got != want {
				t.Errorf("Key() = %q, want %q", got, want)
			}
		})
	}
}

// TestStripeVerifyRealPayloads verifies each real payload, delivered two
// seconds after it was created, and checks the event against
// encoding/json's reading of the payload.
func TestStripeVerifyRealPayloads(t *testing.T) {
	names, bodies, err := verifytest.StripePayloads()
	if err != nil {
		t.Fatal(err)
	}
	for i, body := range bodies {
		t.Run(names[i], func(t *testing.T) {
			var want struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Created  int64  `json:"created"`
				Livemode bool   `json:"livemode"`
			}
			if err := json.Unmarshal(body, &want); err != nil || want.ID == "" || want.Type == "" || want.Created == 0 {
				t.Fatalf("json.Unmarshal = %+v, %v; want an event with an id, a type and created", want, err)
			}
			at := time.Unix(want.Created+2, 0)
			v := &stripe.Verifier{Secrets: []string{secret}, Now: func() time.Time { return at }}
			got, err := v.VerifyHeader(stripe.SignatureHeader(body, at, secret), body)
			if err != nil {
				t.Fatalf("Verify() error = %v", err)
			}
			if got.ID != want.ID || got.Type != want.Type || got.Created.Unix() != want.Created || got.Livemode != want.Livemode {
				t.Errorf("Verify() = {ID:%q Type:%q Created:%d Livemode:%t}, want %+v",
					got.ID, got.Type, got.Created.Unix(), got.Livemode, want)
			}
		})
	}
}

// TestStripeVerifyStripeGoHeaders checks that headers stripe-go's own test
// helper generates are accepted, and that stripe-go's ConstructEvent
// rejects an event we accept only because of its api_version.
func TestStripeVerifyStripeGoHeaders(t *testing.T) {
	body := verifytest.StripeEvent("customer.subscription.deleted", "evt_9", now)
	p := stripewebhook.GenerateTestSignedPayload(&stripewebhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: now})
	v := &stripe.Verifier{Secrets: []string{oldSecret, secret}, Now: func() time.Time { return now }}
	if _, err := v.VerifyHeader(p.Header, p.Payload); err != nil {
		t.Errorf("Verify(stripe-go header) error = %v", err)
	}

	real := time.Now()
	old := verifytest.StripeEvent("customer.subscription.deleted", "evt_10", real, verifytest.WithAPIVersion("2019-02-19"))
	header := stripe.SignatureHeader(old, real, secret)
	if _, err := stripewebhook.ConstructEvent(old, header, secret); err == nil {
		t.Errorf("stripe-go ConstructEvent accepted api_version 2019-02-19; the reason Verify avoids it is gone")
	}
	if _, err := (&stripe.Verifier{Secrets: []string{secret}}).VerifyHeader(header, old); err != nil {
		t.Errorf("Verify(api_version 2019-02-19, real clock) error = %v", err)
	}
}

func TestStripeVerifyConfig(t *testing.T) {
	body := []byte(`{"id":"evt_1","type":"ping"}`)
	tests := []struct {
		name   string
		v      stripe.Verifier
		header string
	}{
		{"no secrets", stripe.Verifier{}, stripe.SignatureHeader(body, now, secret)},
		{"empty secret signs nothing", stripe.Verifier{Secrets: []string{""}}, stripe.SignatureHeader(body, now, "")},
		{"an empty secret among good ones", stripe.Verifier{Secrets: []string{secret, " "}}, stripe.SignatureHeader(body, now, " ")},
		{"negative tolerance", stripe.Verifier{Secrets: []string{secret}, Tolerance: -time.Second}, stripe.SignatureHeader(body, now, secret)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.v.Now = func() time.Time { return now }
			if err := tc.v.Validate(); err == nil {
				t.Errorf("Validate() = nil, want an error")
			}
			_, err := tc.v.VerifyHeader(tc.header, body)
			if err == nil {
				t.Fatalf("Verify() = nil error, want a configuration error")
			}
			// A configuration error is ours to fix: it must map to a 5xx,
			// so it wraps neither client kind.
			if errors.Is(err, webhook.ErrUnauthenticated) || errors.Is(err, webhook.ErrMalformed) {
				t.Errorf("Verify() error = %v, want one that wraps no webhook kind", err)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q holds a secret", err)
			}
		})
	}
	good := stripe.Verifier{Secrets: []string{oldSecret, secret}, Tolerance: time.Minute}
	if err := good.Validate(); err != nil {
		t.Errorf("Validate() = %v, want nil", err)
	}
}

func TestStripeVerifyDefaultClock(t *testing.T) {
	body := verifytest.StripeEvent("invoice.paid", "evt_1", time.Now())
	v := &stripe.Verifier{Secrets: []string{secret}}
	if _, err := v.VerifyHeader(stripe.SignatureHeader(body, time.Now(), secret), body); err != nil {
		t.Errorf("Verify(signed now) error = %v", err)
	}
	_, err := v.VerifyHeader(stripe.SignatureHeader(body, time.Now().Add(-time.Hour), secret), body)
	if !errors.Is(err, provider.ErrStale) {
		t.Errorf("Verify(signed an hour ago) error = %v, want %v", err, provider.ErrStale)
	}
}

func TestStripeVerifyConcurrent(t *testing.T) {
	v := &stripe.Verifier{Secrets: []string{oldSecret, secret}, Now: func() time.Time { return now }}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			id := fmt.Sprintf("evt_%d", i)
			body := verifytest.StripeEvent("invoice.paid", id, now)
			for range 50 {
				got, err := v.VerifyHeader(stripe.SignatureHeader(body, now, secret), body)
				if err != nil || got.ID != id {
					t.Errorf("Verify() = %q, %v; want %q, nil", got.ID, err, id)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestStripeDefaultsAreStripeGos keeps the defaults hookinbox copies from
// stripe-go (so that the receiver does not link it) equal to stripe-go's.
func TestStripeDefaultsAreStripeGos(t *testing.T) {
	if got, want := stripe.DefaultTolerance, stripewebhook.DefaultTolerance; got != want {
		t.Errorf("DefaultStripeTolerance = %s, stripe-go's DefaultTolerance = %s", got, want)
	}
}

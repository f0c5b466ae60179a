package paddle_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/providers/paddle"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Paddle's published example (paddle-go-sdk's webhook verifier example):
// this secret key signed testdata/paddle/price.created.json at this ts.
const (
	sdkSecret    = "pdl_ntfset_01hsdn8d43dt7mezr1ef2jtbaw_hKkRiCGyyRhbFwIUuqiTBgI7gnWoV0Gr"
	sdkSignature = "ts=1710929255;h1=6c05ef8fa83c44d751be6d259ec955ce5638e2c54095bf128e408e2fce1589c8"

	secret    = "pdl_ntfset_01hv8w0d1ry0q8z2c3m4x5y6z7_currentCurrentCurrentCurrent00"
	oldSecret = "pdl_ntfset_01hv8w0d1ry0q8z2c3m4x5y6z7_previousPreviousPrevious0000"
)

var sdkTime = time.Unix(1710929255, 0)

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../../testdata/paddle/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyPublishedExample(t *testing.T) {
	body := readFile(t, "price.created.json")
	v := &paddle.Verifier{Secrets: []string{sdkSecret}, Now: func() time.Time { return sdkTime.Add(2 * time.Second) }}
	got, err := v.Verify(context.Background(), webhook.Request{Method: "POST", Header: map[string]string{"paddle-signature": sdkSignature}, Body: body})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want := []webhook.Event{{Provider: "paddle", ID: "evt_01hsdn97563968dy0szkmgjwh3", Type: "price.created",
		Created: time.Date(2024, 3, 20, 10, 7, 35, 590857000, time.UTC), Raw: body}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got, want := paddle.SignatureHeader(body, sdkTime, sdkSecret), sdkSignature; got != want {
		t.Errorf("Sign = %q, want Paddle's %q", got, want)
	}
}

func TestVerify(t *testing.T) {
	now := time.Date(2024, 4, 12, 10, 18, 50, 0, time.UTC)
	body := readFile(t, "transaction.completed.json")
	tampered := []byte(strings.Replace(string(body), `"grand_total": "3300"`, `"grand_total": "0330"`, 1))
	signed := func(b []byte, at time.Time, secrets ...string) map[string]string {
		return map[string]string{"paddle-signature": paddle.SignatureHeader(b, at, secrets...)}
	}
	unsigned := []byte(`{"event_id":"evt_1","event_type":"transaction.completed"}`)
	tests := []struct {
		name     string
		secrets  []string
		header   map[string]string
		body     []byte
		wantErr  error
		wantKind error
	}{
		{name: "valid", header: signed(body, now, secret), body: body},
		{name: "valid 299s old", header: signed(body, now.Add(-299*time.Second), secret), body: body},
		{name: "valid exactly the tolerance ahead", header: signed(body, now.Add(300*time.Second), secret), body: body},
		{name: "rotation: signed with the old key, both configured", secrets: []string{oldSecret, secret}, header: signed(body, now, oldSecret), body: body},
		{name: "rotation: signed with the new key, both configured", secrets: []string{oldSecret, secret}, header: signed(body, now, secret), body: body},
		{name: "two h1 while Paddle rotates, one key configured", header: signed(body, now, oldSecret, secret), body: body},
		{name: "two h1, the matching one first", header: signed(body, now, secret, oldSecret), body: body},
		{name: "spaces around parts and an unknown key", header: map[string]string{"paddle-signature": " " + strings.ReplaceAll(paddle.SignatureHeader(body, now, secret), ";", " ; ") + ";h2=abc"}, body: body},
		{name: "bad signature: tampered body", header: signed(body, now, secret), body: tampered, wantErr: provider.ErrBadSignature, wantKind: webhook.ErrUnauthenticated},
		{name: "bad signature: another endpoint's key", header: signed(body, now, oldSecret), body: body, wantErr: provider.ErrBadSignature, wantKind: webhook.ErrUnauthenticated},
		{name: "bad signature: ts changed after signing", header: map[string]string{"paddle-signature": strings.Replace(paddle.SignatureHeader(body, now, secret), "ts=1712917130", "ts=1712917131", 1)}, body: body, wantErr: provider.ErrBadSignature, wantKind: webhook.ErrUnauthenticated},
		{name: "bad signature: Stripe's scheme (ts.body)", header: map[string]string{"paddle-signature": "ts=1712917130;h1=" + strings.Repeat("0", 64)}, body: body, wantErr: provider.ErrBadSignature, wantKind: webhook.ErrUnauthenticated},
		{name: "stale: 301s old", header: signed(body, now.Add(-301*time.Second), secret), body: body, wantErr: provider.ErrStale, wantKind: webhook.ErrUnauthenticated},
		{name: "stale: a day old", header: signed(body, now.Add(-24*time.Hour), secret), body: body, wantErr: provider.ErrStale, wantKind: webhook.ErrUnauthenticated},
		{name: "future: 301s ahead", header: signed(body, now.Add(301*time.Second), secret), body: body, wantErr: provider.ErrFuture, wantKind: webhook.ErrUnauthenticated},
		{name: "no header", header: map[string]string{}, body: body, wantErr: provider.ErrNoSignature, wantKind: webhook.ErrUnauthenticated},
		{name: "no ts", header: map[string]string{"paddle-signature": strings.SplitN(paddle.SignatureHeader(body, now, secret), ";", 2)[1]}, body: body, wantErr: provider.ErrNoSignature, wantKind: webhook.ErrUnauthenticated},
		{name: "no h1", header: map[string]string{"paddle-signature": "ts=1712917130"}, body: body, wantErr: provider.ErrNoSignature, wantKind: webhook.ErrUnauthenticated},
		{name: "h1 not hex", header: map[string]string{"paddle-signature": "ts=1712917130;h1=zz"}, body: body, wantErr: provider.ErrNoSignature, wantKind: webhook.ErrUnauthenticated},
		{name: "two ts", header: map[string]string{"paddle-signature": "ts=1712917130;" + paddle.SignatureHeader(body, now, secret)}, body: body, wantErr: provider.ErrNoSignature, wantKind: webhook.ErrUnauthenticated},
		{name: "ts not a number", header: map[string]string{"paddle-signature": "ts=soon;h1=" + strings.Repeat("0", 64)}, body: body, wantErr: provider.ErrNoSignature, wantKind: webhook.ErrUnauthenticated},
		{name: "unsigned garbage is unauthenticated, not malformed", header: map[string]string{}, body: []byte("\x00not json"), wantErr: provider.ErrNoSignature, wantKind: webhook.ErrUnauthenticated},
		{name: "signed, not JSON", header: signed([]byte("hello"), now, secret), body: []byte("hello"), wantErr: provider.ErrNotJSON, wantKind: webhook.ErrMalformed},
		{name: "signed, no event_id", header: signed([]byte(`{"event_type":"x"}`), now, secret), body: []byte(`{"event_type":"x"}`), wantErr: provider.ErrNoEventID, wantKind: webhook.ErrMalformed},
		{name: "signed, event_id with a '#'", header: signed([]byte(`{"event_id":"evt#1","event_type":"x"}`), now, secret), body: []byte(`{"event_id":"evt#1","event_type":"x"}`), wantErr: provider.ErrBadEventID, wantKind: webhook.ErrMalformed},
		{name: "signed, no event_type", header: signed([]byte(`{"event_id":"evt_1"}`), now, secret), body: []byte(`{"event_id":"evt_1"}`), wantErr: provider.ErrNotEvent, wantKind: webhook.ErrMalformed},
		{name: "signed, event_id a number", header: signed([]byte(`{"event_id":1,"event_type":"x"}`), now, secret), body: []byte(`{"event_id":1,"event_type":"x"}`), wantErr: provider.ErrNotEvent, wantKind: webhook.ErrMalformed},
		{name: "signed, occurred_at not a time", header: signed([]byte(`{"event_id":"evt_1","event_type":"x","occurred_at":"noon"}`), now, secret), body: []byte(`{"event_id":"evt_1","event_type":"x","occurred_at":"noon"}`), wantErr: provider.ErrNotEvent, wantKind: webhook.ErrMalformed},
		{name: "unsigned event", header: map[string]string{}, body: unsigned, wantErr: provider.ErrNoSignature, wantKind: webhook.ErrUnauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secrets := tt.secrets
			if secrets == nil {
				secrets = []string{secret}
			}
			v := &paddle.Verifier{Secrets: secrets, Now: func() time.Time { return now }}
			evs, err := v.Verify(context.Background(), webhook.Request{Method: "POST", Header: tt.header, Body: tt.body})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !errors.Is(err, tt.wantKind) {
					t.Fatalf("Verify error = %v, want %v (%v)", err, tt.wantErr, tt.wantKind)
				}
				if evs != nil {
					t.Errorf("Verify returned events with an error: %v", evs)
				}
				return
			}
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			want := []webhook.Event{{Provider: "paddle", ID: "evt_01hv8x2acma6xvfynhhb0s8z7c", Type: "transaction.completed",
				Created: time.Date(2024, 4, 12, 10, 18, 49, 621022000, time.UTC), Raw: tt.body}}
			if diff := cmp.Diff(want, evs); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if got, want := evs[0].Key(), webhook.Key("paddle#evt_01hv8x2acma6xvfynhhb0s8z7c"); got != want {
				t.Errorf("Key = %q, want %q", got, want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		v    paddle.Verifier
		want string // "" for valid
	}{
		{name: "one key", v: paddle.Verifier{Secrets: []string{secret}}},
		{name: "no key", v: paddle.Verifier{}, want: "no secret"},
		{name: "empty key", v: paddle.Verifier{Secrets: []string{secret, " "}}, want: "secret 1 is empty"},
		{name: "negative tolerance", v: paddle.Verifier{Secrets: []string{secret}, Tolerance: -time.Second}, want: "tolerance -1s is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.v.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), secret) {
				t.Errorf("Validate = %v, want it to say %q and name no key", err, tt.want)
			}
		})
	}
}

func TestErrorsNameNoSecretOrSignature(t *testing.T) {
	now := time.Unix(1712917130, 0)
	body := readFile(t, "transaction.completed.json")
	header := paddle.SignatureHeader(body, now, oldSecret)
	v := &paddle.Verifier{Secrets: []string{secret}, Now: func() time.Time { return now }}
	_, err := v.Verify(context.Background(), webhook.Request{Header: map[string]string{"paddle-signature": header}, Body: body})
	if err == nil {
		t.Fatal("Verify accepted another key's signature")
	}
	h1 := strings.SplitN(header, "h1=", 2)[1]
	for _, s := range []string{secret, oldSecret, h1, "order-1042"} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error %q contains %q", err, s)
		}
	}
}

package destination

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/providers/standard"
	"github.com/hookinbox/hookinbox/webhook"
)

// payloads are verified bodies json.Marshal would not keep byte for
// byte: HTML characters it escapes, unicode escapes, whitespace, key
// order, number spellings.
var payloads = map[string]string{
	"html":            `{"note":"<b>Tom & Jerry</b> -> 5 > 3"}`,
	"unicode escapes": `{"name":"Ren\u00e9e \ud83d\ude00","raw":"Renée 😀","sep":"\u2028"}`,
	"whitespace":      "{\n  \"id\" : \"evt_1\",\n\t\"data\": [ 1, 2 ]\n}\n",
	"key order":       `{"z":1,"a":{"y":2,"b":3},"id":"evt_1","a2":null}`,
	"numbers":         `{"amount":1.50,"big":12345678901234567890,"exp":1E+2,"neg":-0}`,
	"escaped slash":   `{"url":"https:\/\/example.com\/a?b=1&c=2"}`,
}

// TestNewBody: the body is the documented envelope, decodable as Body,
// whose payload is the provider's bytes exactly: the body's bytes after
// the first "payload": less the final }.
func TestNewBody(t *testing.T) {
	received := time.Date(2026, 5, 1, 12, 0, 3, 500, time.FixedZone("CEST", 7200))
	tests := map[string]struct{ raw, payload string }{
		"json":     {`{"id":"evt_1","type":"invoice.paid"}`, `{"id":"evt_1","type":"invoice.paid"}`},
		"not json": {`id=123&state=PAID`, `"id=123\u0026state=PAID"`},
	}
	for name, raw := range payloads {
		tests[name] = struct{ raw, payload string }{raw, raw}
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			ev := webhook.Event{Provider: "stripe", ID: "evt_1", Type: `odd "payload": type`, Received: received, Raw: []byte(tt.raw)}
			b := newBody(ev, "crm")
			whole := []byte(b.String())
			if len(whole) != b.size() || !bytes.Equal(whole, readAll(t, b.reader())) {
				t.Fatalf("String, size and reader disagree: %d bytes, size %d", len(whole), b.size())
			}
			if got := whole[bytes.Index(whole, []byte(`"payload":`))+len(`"payload":`) : len(whole)-1]; string(got) != tt.payload {
				t.Errorf("payload bytes in the body = %q; want %q", got, tt.payload)
			}
			var got Body
			if err := json.Unmarshal(whole, &got); err != nil {
				t.Fatalf("body is not JSON: %v\n%s", err, whole)
			}
			want := Body{ID: WebhookID("stripe#evt_1", "crm"), Provider: "stripe", Type: ev.Type,
				Key: "stripe#evt_1", ReceivedAt: "2026-05-01T10:00:03Z", Payload: json.RawMessage(bytes.TrimSpace([]byte(tt.payload)))}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func readAll(t *testing.T, r io.Reader) []byte {
	t.Helper()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWebhookID(t *testing.T) {
	a, b := WebhookID("stripe#evt_1", "crm"), WebhookID("stripe#evt_1", "crm")
	if a != b || len(a) != len("msg_")+32 {
		t.Errorf("WebhookID = %q then %q; want the same msg_ and 32 hex digits", a, b)
	}
	if other := WebhookID("stripe#evt_1", "erp"); other == a {
		t.Errorf("WebhookID is %q for two destinations; want them to differ", a)
	}
}

func TestSignedHeadersVerifyAsStandardWebhooks(t *testing.T) {
	const oldSecret, newSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"
	at := time.Unix(1_777_000_000, 0)
	b := newBody(webhook.Event{Provider: "stripe", ID: "evt_1", Type: "invoice.paid", Raw: []byte(payloads["html"])}, "crm")
	body := []byte(b.String())
	h, err := standard.SignedHeaders(WebhookID("stripe#evt_1", "crm"), at, []string{oldSecret, newSecret}, b.parts()...)
	if err != nil {
		t.Fatal(err)
	}
	hdr := http.Header{}
	for k, v := range h {
		hdr.Set(k, v)
	}
	for _, secret := range []string{oldSecret, newSecret} {
		v := &standard.Verifier{Secrets: []string{secret}, Now: func() time.Time { return at }}
		if _, err := v.Verify(context.Background(), webhook.Request{Method: "POST", Header: h, Body: body}); err != nil {
			t.Errorf("verify with one of the two secrets: %v", err)
		}
	}
	if got := hdr.Get("content-type"); got != "application/json" {
		t.Errorf("content-type = %q", got)
	}
	if _, err := standard.SignedHeaders("msg_1", at, []string{"whsec_not base64!"}, body); err == nil {
		t.Error("SignedHeaders with a secret that is not base64 = nil error")
	}
}

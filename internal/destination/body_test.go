package destination

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/provider/standard"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestNewBody(t *testing.T) {
	received := time.Date(2026, 5, 1, 12, 0, 3, 500, time.FixedZone("CEST", 7200))
	tests := []struct {
		name    string
		raw     string
		payload string
	}{
		{"json payload", `{"id":"evt_1","type":"invoice.paid"}`, `{"id":"evt_1","type":"invoice.paid"}`},
		{"not json", `id=123&state=PAID`, `"id=123\u0026state=PAID"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := webhook.Event{Provider: "stripe", ID: "evt_1", Type: "invoice.paid", Received: received, Raw: []byte(tt.raw)}
			var got map[string]any
			if err := json.Unmarshal(newBody(ev, "crm"), &got); err != nil {
				t.Fatal(err)
			}
			var payload any
			if err := json.Unmarshal([]byte(tt.payload), &payload); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"id": WebhookID("stripe#evt_1", "crm"), "provider": "stripe", "type": "invoice.paid",
				"key": "stripe#evt_1", "received_at": "2026-05-01T10:00:03Z", "payload": payload}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
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
	body := newBody(webhook.Event{Provider: "stripe", ID: "evt_1", Type: "invoice.paid", Raw: []byte(`{}`)}, "crm")
	h, err := standard.SignedHeaders(body, WebhookID("stripe#evt_1", "crm"), at, oldSecret, newSecret)
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
	if _, err := standard.SignedHeaders(body, "msg_1", at, "whsec_not base64!"); err == nil {
		t.Error("SignedHeaders with a secret that is not base64 = nil error")
	}
}

package stripe_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestStripeVerifyThin: a thin notification is verified as a snapshot
// event is, and claimed under its snapshot_event when it names one.
func TestStripeVerifyThin(t *testing.T) {
	related := verifytest.StripeRelated{ID: "cus_1", Type: "customer", URL: "/v1/customers/cus_1"}
	tests := []struct {
		name     string
		body     []byte
		wantID   string
		wantType string
	}{
		{"thin only: its own id", verifytest.StripeThin("v1.customer.created", "evt_test_65thin", now, related, ""), "evt_test_65thin", "customer.created"},
		{"migration: the snapshot event's id", verifytest.StripeThin("v1.customer.created", "evt_test_65thin", now, related, "evt_1snapshot"), "evt_1snapshot", "customer.created"},
		{"API v2 type kept", verifytest.StripeThin("v2.core.account.created", "evt_test_65v2", now,
			verifytest.StripeRelated{ID: "acct_1", Type: "v2.core.account", URL: "/v2/core/accounts/acct_1"}, ""), "evt_test_65v2", "v2.core.account.created"},
		{"no related object", verifytest.StripeThin("v2.core.health.event_generation_failure.resolved", "evt_test_65h", now, verifytest.StripeRelated{}, ""),
			"evt_test_65h", "v2.core.health.event_generation_failure.resolved"},
	}
	v := &stripe.Verifier{Secrets: []string{secret}, Now: func() time.Time { return now }}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := v.VerifyHeader(stripe.SignatureHeader(tt.body, now, secret), tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tt.wantID || got.Type != tt.wantType || !got.Created.Equal(now) || string(got.Raw) != string(tt.body) {
				t.Errorf("Verify() = {ID:%q Type:%q Created:%v}, want {%q %q %v} and the body as Raw", got.ID, got.Type, got.Created, tt.wantID, tt.wantType, now)
			}
		})
	}
}

// TestStripeVerifyThinMalformed: a signed thin notification that cannot
// be claimed or fetched is refused with a malformed kind (400).
func TestStripeVerifyThinMalformed(t *testing.T) {
	tests := []struct {
		name string
		body string
		want error
	}{
		{"no id", `{"object":"v2.core.event","type":"v1.customer.created","created":"2026-12-01T10:00:00.000Z"}`, provider.ErrNoEventID},
		{"no type", `{"id":"evt_test_1","object":"v2.core.event","created":"2026-12-01T10:00:00.000Z"}`, provider.ErrNotEvent},
		{"created a number", `{"id":"evt_test_1","object":"v2.core.event","type":"v1.customer.created","created":1764583200}`, provider.ErrNotEvent},
		{"created not RFC 3339", `{"id":"evt_test_1","object":"v2.core.event","type":"v1.customer.created","created":"yesterday"}`, provider.ErrNotEvent},
		{"snapshot_event not an id", `{"id":"evt_test_1","object":"v2.core.event","type":"v1.customer.created","snapshot_event":"evt/../x"}`, provider.ErrBadEventID},
		{"snapshot_event empty", `{"id":"evt_test_1","object":"v2.core.event","type":"v1.customer.created","snapshot_event":""}`, provider.ErrBadEventID},
		{"snapshot_event a number", `{"id":"evt_test_1","object":"v2.core.event","type":"v1.customer.created","snapshot_event":7}`, provider.ErrBadEventID},
		{"related URL elsewhere", `{"id":"evt_test_1","object":"v2.core.event","type":"v1.customer.created","related_object":{"url":"https://example.com/v1/customers/cus_1"}}`, provider.ErrNotEvent},
		{"related URL climbs", `{"id":"evt_test_1","object":"v2.core.event","type":"v1.customer.created","related_object":{"url":"/v1/../v1/customers"}}`, provider.ErrNotEvent},
		{"another object", `{"id":"evt_test_1","object":"v2.core.event_destination","type":"x"}`, provider.ErrNotEvent},
	}
	v := &stripe.Verifier{Secrets: []string{secret}, Now: func() time.Time { return now }}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.VerifyHeader(stripe.SignatureHeader([]byte(tt.body), now, secret), []byte(tt.body))
			if !errors.Is(err, tt.want) || !errors.Is(err, webhook.ErrMalformed) {
				t.Errorf("Verify() error = %v, want %v (malformed)", err, tt.want)
			}
		})
	}
}

// TestStripeVerifyThinPayloads verifies the thin notifications kept in
// testdata/stripe/thin.
func TestStripeVerifyThinPayloads(t *testing.T) {
	names, bodies, err := verifytest.StripeThinPayloads()
	if err != nil || len(bodies) == 0 {
		t.Fatalf("no thin payloads: %v", err)
	}
	for i, body := range bodies {
		t.Run(names[i], func(t *testing.T) {
			var want struct {
				ID            string    `json:"id"`
				Type          string    `json:"type"`
				Created       time.Time `json:"created"`
				SnapshotEvent string    `json:"snapshot_event"`
			}
			if err := json.Unmarshal(body, &want); err != nil {
				t.Fatal(err)
			}
			at := want.Created.Add(2 * time.Second)
			v := &stripe.Verifier{Secrets: []string{secret}, Now: func() time.Time { return at }}
			got, err := v.VerifyHeader(stripe.SignatureHeader(body, at, secret), body)
			if err != nil {
				t.Fatalf("Verify() error = %v", err)
			}
			wantID := want.ID
			if want.SnapshotEvent != "" {
				wantID = want.SnapshotEvent
			}
			if got.ID != wantID || got.Type != stripe.SnapshotType(want.Type) || !got.Created.Equal(want.Created) {
				t.Errorf("Verify() = {ID:%q Type:%q Created:%v}, want %q %q %v", got.ID, got.Type, got.Created, wantID, stripe.SnapshotType(want.Type), want.Created)
			}
		})
	}
}

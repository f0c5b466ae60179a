package paddle_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/paddle"
	"github.com/hookinbox/hookinbox/webhook"
)

// FuzzVerify: whatever the header and body, Verify never panics, refuses
// with an error of a webhook kind, and accepts only a body signed with the
// secret key, returning an event with a valid key.
func FuzzVerify(f *testing.F) {
	now := time.Unix(1712917130, 0)
	signed := []byte(`{"event_id":"evt_1","event_type":"transaction.completed","occurred_at":"2024-04-12T10:18:49Z"}`)
	f.Add(paddle.SignatureHeader(signed, now, secret), signed)
	f.Add(paddle.SignatureHeader(signed, now, oldSecret, secret), signed)
	f.Add("ts=1712917130;h1=;h1=zz;ts=", []byte("{}"))
	f.Add("", []byte(nil))
	v := &paddle.Verifier{Secrets: []string{secret}, Now: func() time.Time { return now }}
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		evs, err := v.Verify(context.Background(), webhook.Request{Method: "POST", Header: map[string]string{"paddle-signature": header}, Body: body})
		if err != nil {
			if !errors.Is(err, webhook.ErrUnauthenticated) && !errors.Is(err, webhook.ErrMalformed) {
				t.Fatalf("error %v wraps no webhook kind", err)
			}
			return
		}
		if len(evs) != 1 || webhook.ValidateEventID(evs[0].ID) != nil || evs[0].Type == "" {
			t.Fatalf("accepted %v", evs)
		}
		if _, err := webhook.ParseKey(string(evs[0].Key())); err != nil {
			t.Fatalf("key %q: %v", evs[0].Key(), err)
		}
	})
}

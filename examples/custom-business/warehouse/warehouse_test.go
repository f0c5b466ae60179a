package warehouse_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"example.com/custom-business/warehouse"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestSignedDeliveriesVerify: what Sign sends verifies under the same
// secret, keyed by the body's id; a forged, tampered or unsigned one is
// refused before the body is read, and a signed body that is no event is
// malformed.
func TestSignedDeliveriesVerify(t *testing.T) {
	p, s := warehouse.Provider{}, warehouse.Sender()
	body := []byte(`{"id":"wh_evt_1","type":"shipment.dispatched","created":"2026-12-01T10:00:00Z","order":"1001"}`)
	req, err := s.Sign(sample.Event{Body: body}, []string{"s3cret"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Verifier([]string{"old", "s3cret"}, &provider.Env{})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := v.Verify(context.Background(), req)
	if err != nil || len(evs) != 1 || evs[0].Key() != "warehouse#wh_evt_1" || evs[0].Type != "shipment.dispatched" || string(evs[0].Raw) != string(body) {
		t.Fatalf("Verify = %+v, %v", evs, err)
	}
	forged, _ := s.Sign(sample.Event{Body: body}, []string{"attacker"}, time.Now())
	notEvent, _ := s.Sign(sample.Event{Body: []byte(`{"type":"shipment.dispatched"}`)}, []string{"s3cret"}, time.Now())
	tests := []struct {
		name string
		req  webhook.Request
		want error
	}{
		{"forged", forged, provider.ErrBadSignature},
		{"tampered", webhook.Request{Header: req.Header, Body: append([]byte(nil), append(body[:len(body)-1], ' ', '}')...)}, provider.ErrBadSignature},
		{"unsigned", webhook.Request{Header: map[string]string{}, Body: body}, provider.ErrNoSignature},
		{"no id", notEvent, provider.ErrNoEventID},
	}
	for _, tt := range tests {
		if _, err := v.Verify(context.Background(), tt.req); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := p.Verifier(nil, &provider.Env{}); err == nil {
		t.Error("a verifier without a secret was built")
	}
}

// TestSampleIsFresh: a sample sent by name gets a fresh id, which the
// verifier keys it by; a file keeps its own.
func TestSampleIsFresh(t *testing.T) {
	p, s := warehouse.Provider{}, warehouse.Sender()
	body := []byte(`{"id":"wh_evt_1","type":"shipment.dispatched","created":"2026-12-01T10:00:00Z","order":"1001"}`)
	v, err := p.Verifier([]string{"s3cret"}, &provider.Env{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []webhook.Key
	for _, fresh := range []bool{true, true, false} {
		ev, err := s.Sample(sample.Event{Body: body, Fresh: fresh})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := s.Sign(ev, []string{"s3cret"}, time.Now())
		evs, err := v.Verify(context.Background(), req)
		if err != nil || len(evs) != 1 || evs[0].ID != ev.ID || evs[0].Type != ev.Type {
			t.Fatalf("Verify = %+v, %v; want the sample's %s %s", evs, err, ev.ID, ev.Type)
		}
		keys = append(keys, evs[0].Key())
	}
	if keys[0] == keys[1] || keys[0] == "warehouse#wh_evt_1" || keys[2] != "warehouse#wh_evt_1" {
		t.Errorf("keys %v: want two fresh ones, then the file's", keys)
	}
}

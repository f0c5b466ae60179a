package crm_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"example.com/custom-business/crm"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// fakeCRM records the requests it gets and answers with status.
type fakeCRM struct {
	mu     sync.Mutex
	keys   []string
	status int
}

func (f *fakeCRM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, r.Header.Get("Idempotency-Key"))
	if f.status != 0 {
		w.WriteHeader(f.status)
		return
	}
	_, _ = w.Write([]byte(`{"id":"contact_1"}`))
}

func (f *fakeCRM) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.keys...)
}

func checkout(t *testing.T) webhook.Event {
	t.Helper()
	raw, err := os.ReadFile("../testdata/checkout.session.completed.json")
	if err != nil {
		t.Fatal(err)
	}
	return webhook.Event{Provider: "stripe", ID: "evt_1CrmExample00000000000001", Type: "checkout.session.completed", Created: time.Unix(1700000000, 0), Raw: raw}
}

func TestNotifyOnce(t *testing.T) {
	f := &fakeCRM{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	b := &crm.Business{URL: srv.URL, Client: srv.Client()}
	ledger := effects.NewMemoryLedger()
	ev := checkout(t)
	for range 2 {
		if err := b.Handle(context.Background(), ev, ledger.For(ev.Key())); err != nil {
			t.Fatal(err)
		}
	}
	want := effects.IdempotencyKey(ev.Key(), crm.EffectNotify)
	if got := f.calls(); len(got) != 1 || got[0] != want {
		t.Errorf("CRM calls = %q, want one with Idempotency-Key %q", got, want)
	}
}

func TestErrorsClassified(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		permanent bool
	}{
		{"down", http.StatusServiceUnavailable, false},
		{"throttled", http.StatusTooManyRequests, false},
		{"refused", http.StatusUnprocessableEntity, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(&fakeCRM{status: tt.status})
			defer srv.Close()
			b := &crm.Business{URL: srv.URL, Client: srv.Client()}
			ev := checkout(t)
			err := b.Handle(context.Background(), ev, effects.NewMemoryLedger().For(ev.Key()))
			if err == nil || webhook.IsPermanent(err) != tt.permanent {
				t.Errorf("CRM %d: err = %v, want permanent=%v", tt.status, err, tt.permanent)
			}
		})
	}
}

func TestOtherEventsIgnored(t *testing.T) {
	b := &crm.Business{URL: "http://127.0.0.1:1", Client: http.DefaultClient}
	ev := webhook.Event{Provider: "stripe", ID: "evt_1", Type: "invoice.paid", Raw: []byte(`{}`)}
	if err := b.Handle(context.Background(), ev, effects.NewMemoryLedger().For(ev.Key())); !errors.Is(err, webhook.ErrNoHandler) {
		t.Errorf("invoice.paid: err = %v, want ErrNoHandler", err)
	}
}

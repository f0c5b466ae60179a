package mollie_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/providers/mollie"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestProviderSignIsWhatVerifierAccepts(t *testing.T) {
	var p provider.Provider = mollie.Provider{}
	env := &provider.Env{Getenv: func(string) string { return "" }}
	v, err := p.Verifier(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		ev   sample.Event
	}{
		{name: "the id of the payment in the body", ev: sample.Event{Body: []byte(`{"resource":"payment","id":"tr_WDqYK6vllg","status":"paid"}`)}},
		{name: "the id given", ev: sample.Event{ID: "tr_WDqYK6vllg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := mollie.Sender().Sign(tt.ev, nil, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			evs, err := v.Verify(context.Background(), req)
			if err != nil || len(evs) != 1 || evs[0].Key() != "mollie#tr_WDqYK6vllg" || !evs[0].IDOnly || req.Method != "POST" {
				t.Errorf("Verify(Sign) = %v, %v (%s); want one id-only event mollie#tr_WDqYK6vllg from a POST", evs, err, req.Method)
			}
		})
	}
	if _, err := mollie.Sender().Sign(sample.Event{ID: "ord_kEn1PlbGa"}, nil, time.Now()); err == nil {
		t.Error("Sign made a notification of an order id, which Mollie's payment webhook never sends")
	}
	if w := p.Webhook(); !w.Unsigned || !w.IDOnly || w.SecretEnv != "MOLLIE_API_KEY" || w.HTTPMethod() != "POST" {
		t.Errorf("Webhook = %+v, want unsigned, id-only, POST, MOLLIE_API_KEY", w)
	}
}

func TestProviderProcessorFetchesWithTheKey(t *testing.T) {
	api := standin.NewMollie(apiKey)
	api.SetPayment(paidPayment(t))
	srv := httptest.NewServer(api)
	defer srv.Close()
	env := &provider.Env{Getenv: func(k string) string {
		return map[string]string{"MOLLIE_API_KEY": apiKey, "MOLLIE_API_URL": srv.URL}[k]
	}}
	f, err := mollie.Provider{}.Processor(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if !(mollie.Provider{}).Webhook().IDOnly {
		t.Error("a stored notification is not a pointer (IDOnly): the processor would read it as the payment")
	}
	if _, err := f.Get(context.Background(), "tr_5B8cwPMGnU6qLbRvo7qEZo", nil); err != nil {
		t.Errorf("Get: %v", err)
	}
	if _, err := f.Get(context.Background(), "tr_madeup00001", nil); !errors.Is(err, provider.ErrNotFound) || webhook.IsPermanent(err) {
		t.Errorf("Get of an unknown payment = %v, want provider.ErrNotFound (ends IGNORED, never parked)", err)
	}
	if got := api.Fetches("tr_5B8cwPMGnU6qLbRvo7qEZo"); got != 1 {
		t.Errorf("the payment was fetched %d times, want 1", got)
	}

	off, err := mollie.Provider{}.Processor(context.Background(), &provider.Env{Getenv: func(string) string { return "" }})
	if err != nil || off.Get != nil {
		t.Errorf("without MOLLIE_API_KEY: Fetch %+v, %v; want none", off, err)
	}
}

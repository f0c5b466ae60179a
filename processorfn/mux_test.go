package processorfn_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestMuxDispatchesBeforeDecoding: an event reaches only the handler of its
// provider and type; any other event is ErrNoHandler (IGNORED), not
// permanent, whatever its body holds, and no handler runs for it.
func TestMuxDispatchesBeforeDecoding(t *testing.T) {
	var ran []string
	record := func(name string) func(context.Context, webhook.Event, effects.Runner) error {
		return func(_ context.Context, ev webhook.Event, _ effects.Runner) error {
			ran = append(ran, name+" "+ev.Type)
			return nil
		}
	}
	m := processorfn.NewMux().
		On("adyen", record("payment"), "AUTHORISATION", "REFUND").
		On("stripe", record("checkout"), "checkout.session.completed")
	fx := effects.NewMemoryLedger().For("adyen#x")
	ctx := context.Background()

	for _, ev := range []webhook.Event{
		{Provider: "adyen", ID: "1-AUTHORISATION", Type: "AUTHORISATION", Raw: []byte(`{}`)},
		{Provider: "adyen", ID: "1-REFUND", Type: "REFUND", Raw: []byte(`{}`)},
		{Provider: "stripe", ID: "evt_1", Type: "checkout.session.completed", Raw: []byte(`{}`)},
	} {
		if err := m.Handle(ctx, ev, fx); err != nil {
			t.Errorf("%s %s: %v", ev.Provider, ev.Type, err)
		}
	}
	for _, ev := range []webhook.Event{
		{Provider: "adyen", ID: "1-REPORT_AVAILABLE", Type: "REPORT_AVAILABLE", Raw: []byte(`{"amount":{"value":"0"}}`)},
		{Provider: "stripe", ID: "evt_2", Type: "invoice.paid", Raw: []byte(`not json`)},
		{Provider: "github", ID: "d-1", Type: "AUTHORISATION", Raw: nil}, // a type registered for another provider
		{Provider: "shopify", ID: "e-1", Type: "", Raw: []byte(`{}`)},
	} {
		err := m.Handle(ctx, ev, fx)
		if !errors.Is(err, webhook.ErrNoHandler) || webhook.IsPermanent(err) {
			t.Errorf("%s %q: %v, want ErrNoHandler (IGNORED)", ev.Provider, ev.Type, err)
		}
	}
	want := []string{"payment AUTHORISATION", "payment REFUND", "checkout checkout.session.completed"}
	if len(ran) != len(want) {
		t.Fatalf("ran %q, want %q", ran, want)
	}
	for i := range want {
		if ran[i] != want[i] {
			t.Errorf("ran %q, want %q", ran, want)
		}
	}
	if !m.Handles("adyen", "REFUND") || m.Handles("adyen", "REPORT_AVAILABLE") || m.Handles("github", "AUTHORISATION") {
		t.Error("Handles disagrees with the routes registered")
	}
}

func TestMuxRegisteringTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a second handler for stripe invoice.paid did not panic")
		}
	}()
	h := func(context.Context, webhook.Event, effects.Runner) error { return nil }
	processorfn.NewMux().On("stripe", h, "invoice.paid").On("stripe", h, "invoice.paid")
}

// TestBusinessIsProcessorfns: Business is this package's own type, so go
// doc shows its Handle method, not an alias of an internal type.
func TestBusinessIsProcessorfns(t *testing.T) {
	typ := reflect.TypeOf((*processorfn.Business)(nil)).Elem()
	if got, want := typ.PkgPath(), "github.com/hookinbox/hookinbox/processorfn"; got != want {
		t.Errorf("Business is declared in %s, want %s", got, want)
	}
	if _, ok := typ.MethodByName("Handle"); !ok {
		t.Errorf("Business has no method Handle")
	}
}

func TestMuxEventTypes(t *testing.T) {
	nop := func(context.Context, webhook.Event, effects.Runner) error { return nil }
	m := processorfn.NewMux().On("stripe", nop, "invoice.paid", "checkout.session.completed").On("shopify", nop, "orders/paid")
	want := map[string][]string{"stripe": {"checkout.session.completed", "invoice.paid"}, "shopify": {"orders/paid"}}
	if got := m.EventTypes(); !reflect.DeepEqual(got, want) {
		t.Errorf("EventTypes = %v, want %v", got, want)
	}
}

package shop

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hookinbox/hookinbox/internal/providers/mollie"
	"github.com/hookinbox/hookinbox/webhook"
)

func readFixture(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestPaddleTransactionCompletedMarksTheOrderPaid: a completed Paddle
// transaction marks its order paid once, however often it is delivered.
func TestPaddleTransactionCompletedMarksTheOrderPaid(t *testing.T) {
	h := newFakeHarness(t)
	ev := webhook.Event{Provider: "paddle", ID: "evt_01hv8x2acma6xvfynhhb0s8z7c", Type: "transaction.completed",
		Raw: readFixture(t, "../../testdata/paddle/transaction.completed.json")}
	for range 2 {
		handle(t, h, ev)
	}
	want := []Order{{Provider: "paddle", Payment: "txn_01hv8wptq8987qeep44cyrewp9", Reference: "order-1042", Status: OrderPaid, Amount: 3300, Currency: "USD"}}
	if diff := cmp.Diff(want, state(t, h).Orders); diff != "" {
		t.Errorf("orders (-want +got):\n%s", diff)
	}
	recs, err := h.ledger.Records(context.Background(), ev.Key())
	if err != nil || len(recs) != 1 || recs[0].Effect != effectMarkPaid || recs[0].Result != "applied" {
		t.Errorf("ledger %+v, %v; want one %s, applied", recs, err, effectMarkPaid)
	}
	for _, typ := range []string{"transaction.paid", "transaction.created", "subscription.created"} {
		if h.shop.Handles("paddle", typ) {
			t.Errorf("Handles(paddle, %s) = true, want only transaction.completed", typ)
		}
	}
	bad := ev
	bad.ID, bad.Raw = "evt_01hv8x2acma6xvfynhhb0s8z7d", []byte(strings.Replace(string(ev.Raw), `"grand_total": "3300"`, `"grand_total": "33.00"`, 1))
	if err := h.shop.Handle(context.Background(), bad, h.ledger.For(bad.Key())); !webhook.IsPermanent(err) {
		t.Errorf("a grand_total that is not minor units: %v, want a permanent error", err)
	}
}

// TestMolliePaidMarksTheOrderPaidOnce: a Mollie payment fetched while open
// is IGNORED and writes nothing; fetched paid it marks the order paid;
// fetched paid again (a repeated notification) it changes nothing.
func TestMolliePaidMarksTheOrderPaidOnce(t *testing.T) {
	h := newFakeHarness(t)
	paid := readFixture(t, "../../testdata/mollie/payment.paid.json")
	open := []byte(strings.Replace(string(paid), `"status": "paid"`, `"status": "open"`, 1))
	ev := func(raw []byte) webhook.Event {
		return webhook.Event{Provider: "mollie", ID: "tr_5B8cwPMGnU6qLbRvo7qEZo", Type: mollie.Status(raw), IDOnly: true, Raw: raw}
	}
	if err := h.shop.Handle(context.Background(), ev(open), h.ledger.For(ev(open).Key())); !errors.Is(err, webhook.ErrNoHandler) {
		t.Fatalf("open payment: %v, want ErrNoHandler (IGNORED)", err)
	}
	if diff := cmp.Diff(State{}, state(t, h), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("an open payment wrote records (-want +got):\n%s", diff)
	}
	handle(t, h, ev(paid))
	handle(t, h, ev(paid))
	want := []Order{{Provider: "mollie", Payment: "tr_5B8cwPMGnU6qLbRvo7qEZo", Reference: "order-2024", Status: OrderPaid, Amount: 7500, Currency: "EUR"}}
	if diff := cmp.Diff(want, state(t, h).Orders); diff != "" {
		t.Errorf("orders (-want +got):\n%s", diff)
	}
	recs, err := h.ledger.Records(context.Background(), "mollie#tr_5B8cwPMGnU6qLbRvo7qEZo")
	if err != nil || len(recs) != 1 || recs[0].Result != "applied" {
		t.Errorf("ledger %+v, %v; want one %s, applied", recs, err, effectMarkPaid)
	}
}

func TestMolliePaymentsTheShopRefuses(t *testing.T) {
	tests := []struct {
		name string
		raw  string
	}{
		{"another payment", `{"id":"tr_other00001","status":"paid","amount":{"value":"1.00","currency":"EUR"}}`},
		{"not JSON", `<html>`},
		{"an amount with a sign", `{"id":"tr_WDqYK6vllg","status":"paid","amount":{"value":"-1.00","currency":"EUR"}}`},
		{"no amount", `{"id":"tr_WDqYK6vllg","status":"paid"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHarness(t)
			ev := webhook.Event{Provider: "mollie", ID: "tr_WDqYK6vllg", Type: "paid", IDOnly: true, Raw: []byte(tt.raw)}
			if err := h.shop.Handle(context.Background(), ev, h.ledger.For(ev.Key())); !webhook.IsPermanent(err) {
				t.Errorf("Handle = %v, want a permanent error", err)
			}
		})
	}
}

func TestMollieAmounts(t *testing.T) {
	for value, want := range map[string]int64{"75.00": 7500, "1000": 1000, "0.01": 1, "1234.5": 12345} {
		if got, err := minorUnits(value); err != nil || got != want {
			t.Errorf("minorUnits(%q) = %d, %v; want %d", value, got, err, want)
		}
	}
	for _, value := range []string{"", ".50", "1.2.3", "1e3", "-1.00", "+1.00", "12,50"} {
		if _, err := minorUnits(value); err == nil {
			t.Errorf("minorUnits(%q) accepted", value)
		}
	}
}

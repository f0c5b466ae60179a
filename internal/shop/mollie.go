package shop

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// molliePaid is the status, and so the event type, of a paid Mollie
// payment; the shop ignores every other status.
const molliePaid = "paid"

// molliePayment applies the payment Mollie's API returned (the processor
// fetched it; the notification carried only the id; its status is the
// event's type): status paid marks the order paid; a later notification
// of the payment is fetched again. The order's
// reference is metadata.order_id, set when the payment was created.
func (s *Shop) molliePayment(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	var p struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Amount struct {
			Value    string `json:"value"`
			Currency string `json:"currency"`
		} `json:"amount"`
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(ev.Raw, &p); err != nil || p.ID != ev.ID {
		return webhook.Permanent(fmt.Errorf("%s: the fetched payment is not payment %s", ev.Key(), ev.ID))
	}
	if p.Status != molliePaid {
		return fmt.Errorf("shop: mollie payment %s is %s: %w", ev.ID, p.Status, webhook.ErrNoHandler)
	}
	amount, err := minorUnits(p.Amount.Value)
	if err != nil {
		return webhook.Permanent(fmt.Errorf("%s: amount: %w", ev.Key(), err))
	}
	var meta struct {
		OrderID string `json:"order_id"`
	}
	_ = json.Unmarshal(p.Metadata, &meta) // metadata is the merchant's own JSON: any shape, or none
	o := Order{Provider: ev.Provider, Payment: ev.ID, Reference: meta.OrderID, Status: OrderPaid, Amount: amount, Currency: p.Amount.Currency}
	return s.markOrder(ctx, ev, fx, o)
}

// minorUnits reads a Mollie amount ("75.00"; "1000" in yen), which carries
// exactly the currency's decimals, as minor units (7500; 1000).
func minorUnits(value string) (int64, error) {
	whole, frac, _ := strings.Cut(value, ".")
	n, err := strconv.ParseUint(whole+frac, 10, 63)
	if err != nil || whole == "" {
		return 0, fmt.Errorf("%q is not a decimal amount", value)
	}
	return int64(n), nil
}

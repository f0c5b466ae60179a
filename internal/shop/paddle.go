package shop

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// paddleCompleted is the Paddle event type the shop handles: a
// transaction fully paid and processed.
const paddleCompleted = "transaction.completed"

// paddleTransaction marks the order of a completed Paddle transaction
// paid: the order is the transaction (data.id), its reference the
// custom_data.order_id the checkout was opened with. Paddle signs the whole
// body, so every field it reads is Paddle's.
func (s *Shop) paddleTransaction(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	var body struct {
		Data struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			CurrencyCode string `json:"currency_code"`
			CustomData   struct {
				OrderID string `json:"order_id"`
			} `json:"custom_data"`
			Details struct {
				Totals struct {
					GrandTotal string `json:"grand_total"`
				} `json:"totals"`
			} `json:"details"`
		} `json:"data"`
	}
	if err := json.Unmarshal(ev.Raw, &body); err != nil {
		return webhook.Permanent(fmt.Errorf("%s %s: parse transaction: %w", ev.Type, ev.Key(), err))
	}
	tx := body.Data
	if tx.ID == "" || webhook.ValidateEventID(tx.ID) != nil {
		return webhook.Permanent(fmt.Errorf("%s %s: transaction has no usable id", ev.Type, ev.Key()))
	}
	amount, err := strconv.ParseInt(tx.Details.Totals.GrandTotal, 10, 64)
	if err != nil {
		return webhook.Permanent(fmt.Errorf("%s %s: grand_total is not a whole number of minor units", ev.Type, ev.Key()))
	}
	o := Order{Provider: ev.Provider, Payment: tx.ID, Reference: tx.CustomData.OrderID, Status: OrderPaid, Amount: amount, Currency: tx.CurrencyCode}
	return s.markOrder(ctx, ev, fx, o)
}

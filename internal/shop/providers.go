package shop

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// The shop's records of the other providers' events:
//
//	order#<provider>#<payment>   order     provider, payment, reference, status (paid | refunded), amount, currency, version_at, version_event
//	stock#<sku>                  delta#<order key>   amount (minus the quantity sold), event
//	loyalty#<customer>           delta#<order key>   amount (points), event
//
// An order's status is written "only if newer" with the status's rank as
// the version (paid 1, refunded 2), so a refund is never undone by a late
// or repeated payment notification, in any arrival order. Stock and points
// are per-order deltas (effects.AddDelta keyed by the Shopify order, not
// by the event), so an order counts once whichever of orders/create,
// orders/updated and orders/paid first carries a body that says it is
// paid, and however often, under whatever event id (Shopify's event id and
// topic are unsigned headers).
const (
	pkOrder   = "order#"
	pkStock   = "stock#"
	pkLoyalty = "loyalty#"
	skOrder   = "order"
)

// Order statuses, and their rank as the version of the order record.
const (
	OrderPaid     = "paid"
	OrderRefunded = "refunded"
)

var orderRank = map[string]int64{OrderPaid: 1, OrderRefunded: 2}

// Effect names of the other providers' events. Renaming one makes every
// past event run it again on replay.
const (
	effectMarkPaid       = "mark-order-paid"
	effectMarkRefunded   = "mark-order-refunded"
	effectDecrementStock = "decrement-stock"
	effectAccruePoints   = "accrue-loyalty-points"
)

// Order is a payment the shop recorded from Adyen, GoPay, Paddle or Mollie.
type Order struct {
	Provider  string `json:"provider"`
	Payment   string `json:"payment"`   // Adyen's pspReference, GoPay's or Mollie's payment id, Paddle's transaction id
	Reference string `json:"reference"` // the merchant's order reference
	Status    string `json:"status"`    // paid or refunded
	Amount    int64  `json:"amount"`    // minor units
	Currency  string `json:"currency"`
}

// Level is a running total kept as per-order deltas: a SKU's stock change
// or a customer's loyalty points.
type Level struct {
	ID     string `json:"id"`
	Amount int64  `json:"amount"`
}

// The Adyen event codes the shop handles; every other code (CAPTURE,
// REPORT_AVAILABLE, ...) is IGNORED before its item is read.
const (
	adyenAuthorisation = "AUTHORISATION"
	adyenRefund        = "REFUND"
)

// adyenItem is the part of an Adyen NotificationRequestItem the shop reads.
// The amount's value is a json.Number, which takes a JSON number or a
// string holding one: Adyen's own examples send "value":"0".
type adyenItem struct {
	PspReference      string `json:"pspReference"`
	OriginalReference string `json:"originalReference"`
	MerchantReference string `json:"merchantReference"`
	EventCode         string `json:"eventCode"`
	Success           string `json:"success"`
	Amount            struct {
		Value    json.Number `json:"value"`
		Currency string      `json:"currency"`
	} `json:"amount"`
}

// adyenNotification marks the order paid on a successful AUTHORISATION and
// refunded on a successful REFUND (of the payment named by its
// originalReference). A failed one changes nothing. Every field it reads is
// one Adyen signs.
func (s *Shop) adyenNotification(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	var it adyenItem
	if err := json.Unmarshal(ev.Raw, &it); err != nil {
		return webhook.Permanent(fmt.Errorf("%s %s: parse notification item: %w", ev.Type, ev.Key(), err))
	}
	if it.Success != "true" {
		return nil // a refused payment or refund: nothing to record
	}
	amount, err := it.Amount.Value.Int64()
	if err != nil {
		return webhook.Permanent(fmt.Errorf("%s %s: amount.value %q is not a whole number of minor units", ev.Type, ev.Key(), it.Amount.Value))
	}
	o := Order{Provider: "adyen", Payment: it.PspReference, Reference: it.MerchantReference, Status: OrderPaid, Amount: amount, Currency: it.Amount.Currency}
	if it.EventCode == adyenRefund {
		o.Status, o.Payment = OrderRefunded, it.OriginalReference
	}
	if o.Payment == "" {
		return webhook.Permanent(fmt.Errorf("%s %s: no payment reference", ev.Type, ev.Key()))
	}
	return s.markOrder(ctx, ev, fx, o)
}

// gopayPayment applies the state GoPay's API returned for the payment (the
// processor fetched it; the notification carried only the id): PAID marks
// the order paid, REFUNDED refunded, any other state is IGNORED before the
// rest of the payment is read. The effect is named after the state, so the
// same state fetched twice changes nothing, and PAID then REFUNDED records
// both facts once each.
func (s *Shop) gopayPayment(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	var head struct {
		ID    json.Number `json:"id"`
		State string      `json:"state"`
	}
	if err := json.Unmarshal(ev.Raw, &head); err != nil || head.ID.String() != ev.ID {
		return webhook.Permanent(fmt.Errorf("%s: the fetched payment is not payment %s", ev.Key(), ev.ID))
	}
	o := Order{Provider: "gopay", Payment: ev.ID}
	switch head.State {
	case "PAID":
		o.Status = OrderPaid
	case "REFUNDED":
		o.Status = OrderRefunded
	default:
		return fmt.Errorf("shop: gopay payment %s in state %s: %w", ev.ID, head.State, webhook.ErrNoHandler)
	}
	var p struct {
		OrderNumber string `json:"order_number"`
		Amount      int64  `json:"amount"`
		Currency    string `json:"currency"`
	}
	if err := json.Unmarshal(ev.Raw, &p); err != nil {
		return webhook.Permanent(fmt.Errorf("%s: parse %s payment: %w", ev.Key(), head.State, err))
	}
	o.Reference, o.Amount, o.Currency = p.OrderNumber, p.Amount, p.Currency
	return s.markOrder(ctx, ev, fx, o)
}

// markOrder writes the order's status through the effect for it.
func (s *Shop) markOrder(ctx context.Context, ev webhook.Event, fx effects.Runner, o Order) error {
	name := effectMarkPaid
	if o.Status == OrderRefunded {
		name = effectMarkRefunded
	}
	return effects.DoResult(ctx, fx, name, func(ctx context.Context, _ string) (string, error) {
		item := map[string]types.AttributeValue{
			"pk": str(pkOrder + o.Provider + "#" + o.Payment), "sk": str(skOrder),
			"provider": str(o.Provider), "payment": str(o.Payment), "reference": str(o.Reference),
			"status": str(o.Status), "currency": str(o.Currency),
			"amount": &types.AttributeValueMemberN{Value: strconv.FormatInt(o.Amount, 10)},
		}
		applied, err := effects.PutIfNewer(ctx, s.db, s.cfg.Table, item, effects.Version{At: orderRank[o.Status], EventID: string(ev.Key())})
		return effects.NewerResult(applied), err
	})
}

// shopifyOrder is the part of a Shopify order the shop reads.
type shopifyOrder struct {
	ID              json.Number `json:"id"`
	FinancialStatus string      `json:"financial_status"`
	TotalPrice      string      `json:"total_price"`
	Customer        *struct {
		ID json.Number `json:"id"`
	} `json:"customer"`
	LineItems []struct {
		SKU       string      `json:"sku"`
		VariantID json.Number `json:"variant_id"`
		Quantity  int64       `json:"quantity"`
	} `json:"line_items"`
}

// shopifyOrder decrements the stock of every line item and accrues the
// customer's loyalty points (one per whole unit of the total) once the
// order's own body says it is paid (financial_status "paid"), whichever of
// orders/create, orders/updated and orders/paid carries it. Shopify signs
// the body only: the topic and the event id are headers anyone holding a
// captured body can change, so they route the event and nothing more (a
// pending order resent as orders/paid stays pending). Both effects are
// deltas keyed by the order, not by the event, so the order counts once
// whichever of its events comes first, however often each is delivered,
// and under however many made-up event ids.
func (s *Shop) shopifyOrder(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	var o shopifyOrder
	if err := json.Unmarshal(ev.Raw, &o); err != nil {
		return webhook.Permanent(fmt.Errorf("%s %s: parse order: %w", ev.Type, ev.Key(), err))
	}
	if o.FinancialStatus != "paid" {
		return nil // not paid (yet): a later event whose body says paid counts it
	}
	if o.ID.String() == "" || webhook.ValidateEventID(o.ID.String()) != nil {
		return webhook.Permanent(fmt.Errorf("%s %s: order has no usable id", ev.Type, ev.Key()))
	}
	orderKey := webhook.NewKey("shopify-order", o.ID.String())
	sold := map[string]int64{}
	for _, li := range o.LineItems {
		sku := li.SKU
		if sku == "" {
			sku = "variant-" + li.VariantID.String()
		}
		if li.Quantity <= 0 || li.Quantity > math.MaxInt32 {
			return webhook.Permanent(fmt.Errorf("%s %s: line item %s has quantity %d", ev.Type, ev.Key(), sku, li.Quantity))
		}
		sold[sku] += li.Quantity
	}
	skus := make([]string, 0, len(sold))
	for sku := range sold {
		skus = append(skus, sku)
	}
	sort.Strings(skus)
	// The result is "applied" when this event wrote any SKU's delta (an
	// earlier attempt may have written the others), "already done" when
	// another event of the order had written them all.
	err := effects.DoResult(ctx, fx, effectDecrementStock, func(ctx context.Context, _ string) (string, error) {
		wrote := false
		for _, sku := range skus {
			applied, err := effects.AddDelta(ctx, s.db, s.cfg.Table, pkStock+sku, orderKey, -sold[sku])
			if err != nil {
				return "", err
			}
			wrote = wrote || applied
		}
		return effects.OnceResult(wrote), nil
	})
	if err != nil || o.Customer == nil || o.Customer.ID.String() == "" {
		return err // a guest order earns no points
	}
	points, err := wholeUnits(o.TotalPrice)
	if err != nil {
		return webhook.Permanent(fmt.Errorf("%s %s: total_price: %w", ev.Type, ev.Key(), err))
	}
	return effects.DoResult(ctx, fx, effectAccruePoints, func(ctx context.Context, _ string) (string, error) {
		applied, err := effects.AddDelta(ctx, s.db, s.cfg.Table, pkLoyalty+o.Customer.ID.String(), orderKey, points)
		return effects.OnceResult(applied), err
	})
}

// wholeUnits returns the whole units of a Shopify price ("199.00" → 199).
func wholeUnits(price string) (int64, error) {
	whole, _, _ := strings.Cut(strings.TrimSpace(price), ".")
	if whole == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a price", price)
	}
	return n, nil
}

// addProviderItem files an order, stock or loyalty item of the table scan.
func (st *State) addProviderItem(pk, sk string, it map[string]types.AttributeValue) {
	switch {
	case sk == skOrder && strings.HasPrefix(pk, pkOrder):
		amount, _ := strconv.ParseInt(getN(it, "amount"), 10, 64)
		st.Orders = append(st.Orders, Order{
			Provider: getS(it, "provider"), Payment: getS(it, "payment"), Reference: getS(it, "reference"),
			Status: getS(it, "status"), Amount: amount, Currency: getS(it, "currency"),
		})
	case strings.HasPrefix(sk, "delta#") && strings.HasPrefix(pk, pkStock):
		st.Stock = addLevel(st.Stock, strings.TrimPrefix(pk, pkStock), getN(it, "amount"))
	case strings.HasPrefix(sk, "delta#") && strings.HasPrefix(pk, pkLoyalty):
		st.Loyalty = addLevel(st.Loyalty, strings.TrimPrefix(pk, pkLoyalty), getN(it, "amount"))
	}
}

func addLevel(levels []Level, id, amount string) []Level {
	n, _ := strconv.ParseInt(amount, 10, 64)
	for i := range levels {
		if levels[i].ID == id {
			levels[i].Amount += n
			return levels
		}
	}
	return append(levels, Level{ID: id, Amount: n})
}

// sortProviderItems orders the lists addProviderItem filled.
func (st *State) sortProviderItems() {
	sort.Slice(st.Orders, func(i, j int) bool {
		return st.Orders[i].Provider+"#"+st.Orders[i].Payment < st.Orders[j].Provider+"#"+st.Orders[j].Payment
	})
	sort.Slice(st.Stock, func(i, j int) bool { return st.Stock[i].ID < st.Stock[j].ID })
	sort.Slice(st.Loyalty, func(i, j int) bool { return st.Loyalty[i].ID < st.Loyalty[j].ID })
}

func getN(item map[string]types.AttributeValue, name string) string {
	if n, ok := item[name].(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return ""
}

// Package crm is an example business for hookinbox, kept in its own module
// the way a team keeps theirs: on a completed Stripe checkout it keeps the
// customer in its own table, by email, and tells a CRM about them; on a
// paid Shopify order it tells the CRM about the order, with the Stripe
// customer of the order's email when a checkout saved one; on a shipment
// the warehouse dispatched (this module's own provider, package
// warehouse) it tells the CRM about the shipment. Each CRM call and each
// write is an effect of hookinbox's ledger.
//
// Guarantees: the CRM gets one request per checkout event and one per
// paid order however often the provider delivers it and wherever an
// attempt fails (the ledger records each effect; each request carries an
// Idempotency-Key, for the window between the CRM answering and the record
// being written). A paid order is keyed by the order, not the event: its
// webhook and the reconciler's claim (shopify#order-<id>-paid), or a
// captured body resent under new event ids, make one CRM order. A CRM that is down (5xx, 429, no answer) is retried with
// backoff by hookinbox; a CRM that refuses the request (another 4xx)
// parks the event in the DLQ with the reason. A Business is safe for
// concurrent use.
package crm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"errors"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stripe/stripe-go/v76"

	"example.com/custom-business/warehouse"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/stripeevent"
	"github.com/hookinbox/hookinbox/webhook"
)

// The ledger names of the effects. Never rename an effect: a new name
// runs again on replay.
const (
	EffectNotify   = "crm-notify"   // POST <CRM_URL>/contacts
	EffectSave     = "save-contact" // the contact in the contacts table
	EffectOrder    = "crm-order"    // POST <CRM_URL>/orders
	EffectShipment = "crm-shipment" // POST <CRM_URL>/shipments
)

// Table is what the business does with its contacts table; a
// *dynamodb.Client is one.
type Table interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
}

// Business sends new customers and paid orders to the CRM at URL, and
// keeps each customer in the table Contacts, by email.
type Business struct {
	URL      string // the CRM's base URL (CRM_URL)
	Client   *http.Client
	DB       Table
	Contacts string // the contacts table (CONTACTS_TABLE)
}

// FromEnv builds the business from CRM_URL and CONTACTS_TABLE, with the
// processor's DynamoDB client; it is a processorfn.BusinessBuilder.
func FromEnv(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
	var missing []string
	for _, k := range []string{"CRM_URL", "CONTACTS_TABLE"} {
		if getenv(k) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("crm: %s required (the CRM's base URL; the contacts table)", strings.Join(missing, " and "))
	}
	b := &Business{
		URL: strings.TrimSuffix(getenv("CRM_URL"), "/"), Client: &http.Client{Timeout: 10 * time.Second},
		DB: processorfn.DynamoDB(ctx, cfg), Contacts: getenv("CONTACTS_TABLE"),
	}
	return b.Mux(), nil
}

// Mux returns the business's handlers by provider and event type: every
// other event ends IGNORED before its payload is read.
func (b *Business) Mux() *processorfn.Mux {
	return processorfn.NewMux().
		On("stripe", b.Checkout, "checkout.session.completed").
		On("shopify", b.OrderPaid, "orders/paid").
		On(warehouse.Name, b.Shipped, "shipment.dispatched")
}

// Shipment is what the CRM receives about a dispatched shipment.
type Shipment struct {
	Order string `json:"order"`
	Event string `json:"hookinbox_event"`
}

// Shipped tells the CRM about a shipment the warehouse dispatched.
func (b *Business) Shipped(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	var s struct {
		Order string `json:"order"`
	}
	if err := json.Unmarshal(ev.Raw, &s); err != nil || s.Order == "" {
		return webhook.Permanent(fmt.Errorf("warehouse %s: not a shipment of an order: %v", ev.Key(), err))
	}
	return effects.DoResult(ctx, fx, EffectShipment, func(ctx context.Context, idempotencyKey string) (string, error) {
		var out struct {
			ID string `json:"id"`
		}
		err := b.Post(ctx, "/shipments", Shipment{Order: s.Order, Event: string(ev.Key())}, idempotencyKey, &out)
		return out.ID, err
	})
}

// Contact is what the CRM receives about a customer.
type Contact struct {
	Customer string `json:"customer,omitempty"`
	Email    string `json:"email,omitempty"`
	Session  string `json:"checkout_session"`
	Event    string `json:"hookinbox_event"`
}

// Checkout saves the customer of a completed checkout under their email
// (so a later order finds them), then tells the CRM about them.
func (b *Business) Checkout(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	cs, err := stripeevent.Object[stripe.CheckoutSession](ev)
	if err != nil {
		return err
	}
	contact := Contact{Session: cs.ID, Event: string(ev.Key())}
	if cs.Customer != nil {
		contact.Customer = cs.Customer.ID
	}
	if cs.CustomerDetails != nil {
		contact.Email = cs.CustomerDetails.Email
	}
	if contact.Email != "" && contact.Customer != "" {
		err := effects.Do(ctx, fx, EffectSave, func(ctx context.Context, _ string) error {
			_, err := b.DB.PutItem(ctx, &dynamodb.PutItemInput{
				TableName: aws.String(b.Contacts),
				Item: map[string]types.AttributeValue{
					"pk": str(emailKey(contact.Email)), "sk": str("contact"),
					"customer": str(contact.Customer), "checkout_session": str(contact.Session), "event": str(contact.Event),
				},
			})
			return err
		})
		if err != nil {
			return err
		}
	}
	return effects.DoResult(ctx, fx, EffectNotify, func(ctx context.Context, idempotencyKey string) (string, error) {
		var out struct {
			ID string `json:"id"`
		}
		err := b.Post(ctx, "/contacts", contact, idempotencyKey, &out)
		return out.ID, err
	})
}

// emailKey is the contacts table's partition key of an email.
func emailKey(email string) string { return "email#" + strings.ToLower(email) }

// Order is what the CRM receives about a paid order.
type Order struct {
	Order    string `json:"order"`
	Email    string `json:"email,omitempty"`
	Customer string `json:"customer,omitempty"`
	Total    string `json:"total"`
	Currency string `json:"currency"`
	Key      string `json:"hookinbox_key"` // the order's key, shopify-order#<id>
}

// OrderPaid tells the CRM about a paid Shopify order, with the customer
// of its email when a checkout saved one, once per order.
//
// Shopify signs the body only: the topic and the event id are headers
// anyone holding a captured body can change. So "paid" comes from the
// body's financial_status (a pending order resent as orders/paid sends
// nothing), and the CRM order is keyed by the order id in the body: the
// first event of the order claims it in the contacts table
// (order#<id>), and every other event of it (the reconciler's
// shopify#order-<id>-paid, a resend under a new event id) finds the claim
// and sends nothing. The Idempotency-Key is the order's too.
func (b *Business) OrderPaid(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	var o struct {
		ID              json.Number `json:"id"`
		FinancialStatus string      `json:"financial_status"`
		Email           string      `json:"email"`
		TotalPrice      string      `json:"total_price"`
		Currency        string      `json:"currency"`
		Customer        struct {
			Email string `json:"email"`
		} `json:"customer"`
	}
	if err := json.Unmarshal(ev.Raw, &o); err != nil || webhook.ValidateEventID(o.ID.String()) != nil {
		return webhook.Permanent(fmt.Errorf("shopify %s: not an order with a usable id: %v", ev.Key(), err))
	}
	if o.FinancialStatus != "paid" {
		return nil // not paid: the topic is unsigned and decides nothing
	}
	if o.Email == "" {
		o.Email = o.Customer.Email
	}
	key := webhook.NewKey("shopify-order", o.ID.String())
	order := Order{Order: o.ID.String(), Email: o.Email, Total: o.TotalPrice, Currency: o.Currency, Key: string(key)}
	if o.Email != "" {
		// A read, not an effect: it changes nothing, so it may run again.
		out, err := b.DB.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(b.Contacts), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": str(emailKey(o.Email)), "sk": str("contact")},
		})
		if err != nil {
			return fmt.Errorf("contacts table: %w", err)
		}
		if v, ok := out.Item["customer"].(*types.AttributeValueMemberS); ok {
			order.Customer = v.Value
		}
	}
	return effects.DoResult(ctx, fx, EffectOrder, func(ctx context.Context, _ string) (string, error) {
		mine, err := b.claimOrder(ctx, key, ev.Key())
		switch {
		case err != nil:
			return "", err
		case !mine:
			return "sent for " + string(key) + " by another event", nil
		}
		var out struct {
			ID string `json:"id"`
		}
		err = b.Post(ctx, "/orders", order, effects.IdempotencyKey(key, EffectOrder), &out)
		return out.ID, err
	})
}

// claimOrder records in the contacts table that event sends the CRM order
// of order, unless another event did; it reports whether event holds the
// claim (its own retries do).
func (b *Business) claimOrder(ctx context.Context, order, event webhook.Key) (bool, error) {
	_, err := b.DB.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(b.Contacts),
		Item:                      map[string]types.AttributeValue{"pk": str(string(order)), "sk": str(EffectOrder), "event": str(string(event))},
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR #event = :event"),
		ExpressionAttributeNames:  map[string]string{"#event": "event"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":event": str(string(event))},
	})
	var taken *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &taken):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("claim %s: %w", order, err)
	}
	return true, nil
}

// Post POSTs v as JSON to the CRM's path with the Idempotency-Key, and
// decodes a 2xx answer into out. A CRM that is down or throttles is a
// transient error (retried); any other refusal is permanent.
func (b *Business) Post(ctx context.Context, path string, v any, idempotencyKey string, out any) error {
	body, _ := json.Marshal(v)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.URL+path, bytes.NewReader(body))
	if err != nil {
		return webhook.Permanent(fmt.Errorf("crm request: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idempotencyKey)
	resp, err := b.Client.Do(req)
	if err != nil {
		return fmt.Errorf("crm: %w", err) // transient: retried
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		_ = json.Unmarshal(raw, out)
		return nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return fmt.Errorf("crm answered %s", resp.Status)
	default:
		return webhook.Permanent(fmt.Errorf("crm refused %s: %s", path, resp.Status))
	}
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

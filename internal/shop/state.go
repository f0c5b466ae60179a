package shop

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/internal/effects"
	"github.com/hookinbox/hookinbox/internal/webhook"
)

// The shop's items, keyed by pk and sk:
//
//	customer#<customer id>      entitlement   customer, active, source, session_id | subscription_id, version_at, version_event
//	subscription#<sub id>       subscription  id, status, customer, version_at, version_event
//	email#<event key>           email         event, to, template
//	invoice#<event key>         invoice       event, invoice_id, customer
const (
	skEntitlement  = "entitlement"
	skSubscription = "subscription"
	skEmail        = "email"
	skInvoice      = "invoice"
)

// Entitlement sources and email templates.
const (
	sourceCheckout     = "checkout"
	sourceSubscription = "subscription"
	templateWelcome    = "welcome"
)

// State is everything the shop has recorded, for the demo CLI and tests.
// Each list is sorted by its first field.
type State struct {
	Entitlements  []Entitlement  `json:"entitlements"`
	Subscriptions []Subscription `json:"subscriptions"`
	Emails        []Email        `json:"emails"`
	Invoices      []Invoice      `json:"invoices"`
}

// Entitlement is a customer's access, as the newest event about it left it.
type Entitlement struct {
	Customer       string          `json:"customer"`
	Active         bool            `json:"active"`
	Source         string          `json:"source"` // "checkout" or "subscription"
	SessionID      string          `json:"session_id,omitempty"`
	SubscriptionID string          `json:"subscription_id,omitempty"`
	Version        effects.Version `json:"version"`
}

// Subscription is a Stripe subscription, as the newest event about it left
// it. Status is Stripe's status string.
type Subscription struct {
	ID       string          `json:"id"`
	Status   string          `json:"status"`
	Customer string          `json:"customer"`
	Version  effects.Version `json:"version"`
}

// Email is an email the shop sent because of an event.
type Email struct {
	Event    webhook.Key `json:"event"`
	To       string      `json:"to"`
	Template string      `json:"template"`
}

// Invoice is a Stripe invoice the shop created because of an event.
type Invoice struct {
	Event     webhook.Key `json:"event"`
	InvoiceID string      `json:"invoice_id"`
	Customer  string      `json:"customer"`
}

// entitlement is an Entitlement without its version, which PutIfNewer adds.
type entitlement struct {
	Customer, Source, SessionID, SubscriptionID string
	Active                                      bool
}

func entitlementItem(e entitlement) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		"pk":       str("customer#" + e.Customer),
		"sk":       str(skEntitlement),
		"customer": str(e.Customer),
		"active":   &types.AttributeValueMemberBOOL{Value: e.Active},
		"source":   str(e.Source),
	}
	if e.SessionID != "" {
		item["session_id"] = str(e.SessionID)
	}
	if e.SubscriptionID != "" {
		item["subscription_id"] = str(e.SubscriptionID)
	}
	return item
}

func subscriptionItem(s Subscription) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk":       str("subscription#" + s.ID),
		"sk":       str(skSubscription),
		"id":       str(s.ID),
		"status":   str(s.Status),
		"customer": str(s.Customer),
	}
}

func emailItem(e Email) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk":       str("email#" + string(e.Event)),
		"sk":       str(skEmail),
		"event":    str(string(e.Event)),
		"to":       str(e.To),
		"template": str(e.Template),
	}
}

func invoiceItem(i Invoice) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk":         str("invoice#" + string(i.Event)),
		"sk":         str(skInvoice),
		"event":      str(string(i.Event)),
		"invoice_id": str(i.InvoiceID),
		"customer":   str(i.Customer),
	}
}

// State reads every record of the shop with a consistent, paginated Scan.
// It is meant for the demo CLI and tests, not for a large table.
func (s *Shop) State(ctx context.Context) (State, error) {
	st := State{Entitlements: []Entitlement{}, Subscriptions: []Subscription{}, Emails: []Email{}, Invoices: []Invoice{}}
	in := &dynamodb.ScanInput{TableName: &s.cfg.Table, ConsistentRead: ptr(true)}
	for {
		out, err := s.db.Scan(ctx, in)
		if err != nil {
			return State{}, fmt.Errorf("scan shop table %s: %w", s.cfg.Table, err)
		}
		for _, it := range out.Items {
			st.add(it)
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	sort.Slice(st.Entitlements, func(i, j int) bool { return st.Entitlements[i].Customer < st.Entitlements[j].Customer })
	sort.Slice(st.Subscriptions, func(i, j int) bool { return st.Subscriptions[i].ID < st.Subscriptions[j].ID })
	sort.Slice(st.Emails, func(i, j int) bool { return st.Emails[i].Event < st.Emails[j].Event })
	sort.Slice(st.Invoices, func(i, j int) bool { return st.Invoices[i].Event < st.Invoices[j].Event })
	return st, nil
}

// add files one item under its kind; items of other kinds are skipped.
func (st *State) add(it map[string]types.AttributeValue) {
	pk, sk := getS(it, "pk"), getS(it, "sk")
	v, _ := effects.VersionOf(it)
	switch {
	case sk == skEntitlement && strings.HasPrefix(pk, "customer#"):
		active, _ := it["active"].(*types.AttributeValueMemberBOOL)
		st.Entitlements = append(st.Entitlements, Entitlement{
			Customer:       getS(it, "customer"),
			Active:         active != nil && active.Value,
			Source:         getS(it, "source"),
			SessionID:      getS(it, "session_id"),
			SubscriptionID: getS(it, "subscription_id"),
			Version:        v,
		})
	case sk == skSubscription && strings.HasPrefix(pk, "subscription#"):
		st.Subscriptions = append(st.Subscriptions, Subscription{
			ID: getS(it, "id"), Status: getS(it, "status"), Customer: getS(it, "customer"), Version: v,
		})
	case sk == skEmail && strings.HasPrefix(pk, "email#"):
		st.Emails = append(st.Emails, Email{
			Event: webhook.Key(getS(it, "event")), To: getS(it, "to"), Template: getS(it, "template"),
		})
	case sk == skInvoice && strings.HasPrefix(pk, "invoice#"):
		st.Invoices = append(st.Invoices, Invoice{
			Event: webhook.Key(getS(it, "event")), InvoiceID: getS(it, "invoice_id"), Customer: getS(it, "customer"),
		})
	}
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func getS(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

func ptr[T any](v T) *T { return &v }

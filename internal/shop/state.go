package shop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// The shop's items, keyed by pk and sk:
//
//	access#<holder>             purchase#<session id>       entitlement: holder, customer | email, source, source_id, active, version_at, version_event
//	access#<holder>             subscription#<sub id>       entitlement, as above
//	subscription#<sub id>       subscription                id, status, customer, version_at, version_event
//	email#<checkout key>        email                       event, checkout_session, to, template, sent
//	invoice#<checkout key>      invoice                     event, checkout_session, invoice_id, customer
//
// A holder is who has access: a Stripe customer ID, or for a guest
// checkout (no customer) guestHolder of the address given at checkout. Each
// source of access (a one-time purchase, a subscription) has its own
// entitlement item, written "only if newer" by the events about that
// source alone; the holder has access while any of them is active, so
// ending one source never takes away what another gave.
//
// A checkout's email and invoice are keyed by the checkout session
// (checkoutKey), whichever event brought it: the email item is the claim
// of the event that sends it (event), written before the send and again
// with sent once SES accepted it; the invoice item names the event that
// recorded it first.
const (
	pkAccess       = "access#"
	skEmail        = "email"
	skInvoice      = "invoice"
	skSubscription = "subscription"
)

// Entitlement sources and email templates.
const (
	sourcePurchase     = "purchase"
	sourceSubscription = "subscription"
	templateWelcome    = "welcome"
)

// State is everything the shop has recorded, for the demo CLI and tests.
// Each list is sorted by its first field (entitlements by holder, then
// source and source ID).
type State struct {
	// Access is each holder's access: the union of their entitlements.
	Access        []Access       `json:"access"`
	Entitlements  []Entitlement  `json:"entitlements"`
	Subscriptions []Subscription `json:"subscriptions"`
	Emails        []Email        `json:"emails"`
	Invoices      []Invoice      `json:"invoices"`
	// Orders, Stock and Loyalty are what the other providers' events
	// recorded (see providers.go, paddle.go, mollie.go).
	Orders  []Order `json:"orders,omitempty"`
	Stock   []Level `json:"stock,omitempty"`   // per SKU, the change in stock
	Loyalty []Level `json:"loyalty,omitempty"` // per Shopify customer, the points
}

// Access is whether a holder has access, and from which sources.
type Access struct {
	Holder  string   `json:"holder"`
	Active  bool     `json:"active"`
	Sources []string `json:"sources"` // the active ones, as "<source>#<source id>"
}

// Entitlement is the access one source (a purchase, a subscription) gives
// its holder, as the newest event about that source left it.
type Entitlement struct {
	Holder   string          `json:"holder"`             // customer ID, or guestHolder(email) for a guest
	Customer string          `json:"customer,omitempty"` // the Stripe customer, when there is one
	Email    string          `json:"email,omitempty"`    // a guest's address
	Source   string          `json:"source"`             // "purchase" or "subscription"
	SourceID string          `json:"source_id"`          // the checkout session or subscription ID
	Active   bool            `json:"active"`
	Version  effects.Version `json:"version"`
}

// Subscription is a Stripe subscription as it was last read from Stripe's
// API. Status is Stripe's status string; Version.At is the time that read
// started (Unix milliseconds) and Version.EventID the event that caused it.
type Subscription struct {
	ID       string          `json:"id"`
	Status   string          `json:"status"`
	Customer string          `json:"customer"`
	Version  effects.Version `json:"version"`
}

// Email is an email the shop sent for a checkout session, and the event
// that sent it.
type Email struct {
	Event    webhook.Key `json:"event"`
	Session  string      `json:"checkout_session"`
	To       string      `json:"to"`
	Template string      `json:"template"`
}

// Invoice is a Stripe invoice the shop created for a checkout session,
// and the event that recorded it first.
type Invoice struct {
	Event     webhook.Key `json:"event"`
	Session   string      `json:"checkout_session"`
	InvoiceID string      `json:"invoice_id"`
	Customer  string      `json:"customer"`
}

// guestHolder returns the holder of the access a guest checkout (one with
// no Stripe customer) gave to email, for Access: "guest:" and the hex
// SHA-256 of the address, trimmed and lower-cased. The address itself
// stays out of the table's keys, so it never reaches an error message or
// a key-level log; the entitlement item keeps it as an attribute. A
// customer's holder is the customer ID.
func guestHolder(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email))))
	return "guest:" + hex.EncodeToString(sum[:])
}

func entitlementItem(e Entitlement) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		"pk":        str(pkAccess + e.Holder),
		"sk":        str(e.Source + "#" + e.SourceID),
		"holder":    str(e.Holder),
		"source":    str(e.Source),
		"source_id": str(e.SourceID),
		"active":    &types.AttributeValueMemberBOOL{Value: e.Active},
	}
	if e.Customer != "" {
		item["customer"] = str(e.Customer)
	}
	if e.Email != "" {
		item["email"] = str(e.Email)
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

// emailItem is e's item: the claim of e.Event to send it, and with sent
// the record that SES accepted it.
func emailItem(e Email, sent bool) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk":               str("email#" + string(checkoutKey(e.Session))),
		"sk":               str(skEmail),
		"event":            str(string(e.Event)),
		"checkout_session": str(e.Session),
		"to":               str(e.To),
		"template":         str(e.Template),
		"sent":             &types.AttributeValueMemberBOOL{Value: sent},
	}
}

func invoiceItem(i Invoice) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk":               str("invoice#" + string(checkoutKey(i.Session))),
		"sk":               str(skInvoice),
		"event":            str(string(i.Event)),
		"checkout_session": str(i.Session),
		"invoice_id":       str(i.InvoiceID),
		"customer":         str(i.Customer),
	}
}

// State reads every record of the shop with a consistent, paginated Scan.
// It is meant for the demo CLI and tests, not for a large table.
func (s *Shop) State(ctx context.Context) (State, error) {
	st := State{Access: []Access{}, Entitlements: []Entitlement{}, Subscriptions: []Subscription{}, Emails: []Email{}, Invoices: []Invoice{}}
	in := &dynamodb.ScanInput{TableName: &s.cfg.Table, ConsistentRead: aws.Bool(true)}
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
	sort.Slice(st.Entitlements, func(i, j int) bool {
		a, b := st.Entitlements[i], st.Entitlements[j]
		return a.Holder+"\x00"+a.Source+"\x00"+a.SourceID < b.Holder+"\x00"+b.Source+"\x00"+b.SourceID
	})
	for _, e := range st.Entitlements {
		if n := len(st.Access); n == 0 || st.Access[n-1].Holder != e.Holder {
			st.Access = append(st.Access, Access{Holder: e.Holder, Sources: []string{}})
		}
		if e.Active {
			a := &st.Access[len(st.Access)-1]
			a.Active, a.Sources = true, append(a.Sources, e.Source+"#"+e.SourceID)
		}
	}
	sort.Slice(st.Subscriptions, func(i, j int) bool { return st.Subscriptions[i].ID < st.Subscriptions[j].ID })
	sort.Slice(st.Emails, func(i, j int) bool { return st.Emails[i].Event < st.Emails[j].Event })
	sort.Slice(st.Invoices, func(i, j int) bool { return st.Invoices[i].Event < st.Invoices[j].Event })
	st.sortProviderItems()
	return st, nil
}

// add files one item under its kind; items of other kinds are skipped.
func (st *State) add(it map[string]types.AttributeValue) {
	pk, sk := getS(it, "pk"), getS(it, "sk")
	v, _ := effects.VersionOf(it)
	switch {
	case strings.HasPrefix(pk, pkAccess):
		active, _ := it["active"].(*types.AttributeValueMemberBOOL)
		st.Entitlements = append(st.Entitlements, Entitlement{
			Holder:   getS(it, "holder"),
			Customer: getS(it, "customer"),
			Email:    getS(it, "email"),
			Source:   getS(it, "source"),
			SourceID: getS(it, "source_id"),
			Active:   active != nil && active.Value,
			Version:  v,
		})
	case sk == skSubscription && strings.HasPrefix(pk, "subscription#"):
		st.Subscriptions = append(st.Subscriptions, Subscription{
			ID: getS(it, "id"), Status: getS(it, "status"), Customer: getS(it, "customer"), Version: v,
		})
	case sk == skEmail && strings.HasPrefix(pk, "email#"):
		if sent, _ := it["sent"].(*types.AttributeValueMemberBOOL); sent != nil && !sent.Value {
			break // claimed, not (yet) accepted by SES
		}
		st.Emails = append(st.Emails, Email{
			Event: webhook.Key(getS(it, "event")), Session: getS(it, "checkout_session"), To: getS(it, "to"), Template: getS(it, "template"),
		})
	case sk == skInvoice && strings.HasPrefix(pk, "invoice#"):
		st.Invoices = append(st.Invoices, Invoice{
			Event: webhook.Key(getS(it, "event")), Session: getS(it, "checkout_session"), InvoiceID: getS(it, "invoice_id"), Customer: getS(it, "customer"),
		})
	default:
		st.addProviderItem(pk, sk, it)
	}
}

// putOwned writes item, whose "event" attribute names the event that owns
// it, unless an item with its key is owned by another event; it reports
// whether it wrote. The owner writes it again as often as it likes.
func (s *Shop) putOwned(ctx context.Context, item map[string]types.AttributeValue) (bool, error) {
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                 &s.cfg.Table,
		Item:                      item,
		ConditionExpression:       aws.String("attribute_not_exists(pk) OR #event = :event"),
		ExpressionAttributeNames:  map[string]string{"#event": "event"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":event": item["event"]},
	})
	var taken *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &taken):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("put %s: %w", getS(item, "pk"), err)
	}
	return true, nil
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func getS(item map[string]types.AttributeValue, name string) string {
	if s, ok := item[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

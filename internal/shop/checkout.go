package shop

import (
	"context"
	"fmt"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/shop/shopevents"
	"github.com/hookinbox/hookinbox/webhook"
)

// checkoutSession is the part of a Stripe checkout session the shop reads.
type checkoutSession struct {
	ID              string     `json:"id"`
	Object          string     `json:"object"`
	Customer        expandable `json:"customer"`
	CustomerDetails *struct {
		Email string `json:"email"`
	} `json:"customer_details"`
	CustomerEmail string     `json:"customer_email"`
	PaymentStatus string     `json:"payment_status"`
	Mode          string     `json:"mode"`         // "payment", "subscription" or "setup"
	Subscription  expandable `json:"subscription"` // mode "subscription" only
}

func (s *checkoutSession) object() (typ, id string) { return s.Object, s.ID }

// email returns the address the customer gave at checkout.
func (s *checkoutSession) email() string {
	if s.CustomerDetails != nil && s.CustomerDetails.Email != "" {
		return s.CustomerDetails.Email
	}
	return s.CustomerEmail
}

// checkoutCompleted grants access, sends the welcome email and creates the
// invoice, in that order, once the session is paid: on
// checkout.session.completed when its payment_status is "paid" or
// "no_payment_required", and on checkout.session.async_payment_succeeded
// for a delayed payment method (the completed event then says "unpaid" and
// is done with no effect; Stripe sends the second event only for such a
// session, so an order is fulfilled once). The whole mapping is checked
// before the first effect, so an event the shop cannot map causes none.
//
// The access comes from the session's own source: a one-time purchase
// (mode "payment") is an entitlement of its own, keyed by the session; a
// subscription checkout (mode "subscription") grants what the subscription
// gives, read from Stripe as its own events do (see subscriptionChanged),
// so cancelling it later ends that access and nothing else.
//
// A guest checkout (no customer: customer_creation "if_required") is
// fulfilled too: its access is held by the email address given at
// checkout, and it gets no invoice from the shop, since a Stripe invoice
// needs a customer (Checkout's own invoice_creation covers guests).
//
// The email and the invoice are keyed by the session, not by the event:
// the same checkout can reach the shop as two events (a thin event claimed
// under its own id beside the snapshot event the reconciler lists), and
// either runs them once. The first event to claim the session's welcome
// email sends it; another finds the claim and sends nothing. The invoice's
// Idempotency-Key and metadata name the session, so Stripe returns the
// first invoice to the second call.
func (s *Shop) checkoutCompleted(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	var cs checkoutSession
	if err := parseObject(ev, "checkout.session", &cs); err != nil {
		return err
	}
	if ev.Type == shopevents.CheckoutCompleted && cs.PaymentStatus == "unpaid" {
		return nil // fulfilled when checkout.session.async_payment_succeeded arrives
	}
	v, err := version(ev)
	if err != nil {
		return err
	}
	customer, to, subID := string(cs.Customer), cs.email(), string(cs.Subscription)
	switch {
	case to == "":
		return webhook.Permanent(fmt.Errorf("%s %s: checkout session %s has no customer email", ev.Type, ev.Key(), cs.ID))
	case cs.Mode == "subscription" && subID == "":
		return webhook.Permanent(fmt.Errorf("%s %s: subscription checkout session %s has no subscription", ev.Type, ev.Key(), cs.ID))
	}
	key, order := ev.Key(), checkoutKey(cs.ID)

	err = effects.DoResult(ctx, fx, effectGrantAccess, func(ctx context.Context, _ string) (string, error) {
		if cs.Mode == "subscription" {
			return s.syncSubscription(ctx, ev, subID)
		}
		e := Entitlement{Holder: customer, Customer: customer, Source: sourcePurchase, SourceID: cs.ID, Active: true}
		if customer == "" {
			e.Holder, e.Email = guestHolder(to), to
		}
		applied, err := effects.PutIfNewer(ctx, s.db, s.cfg.Table, entitlementItem(e), v)
		return effects.NewerResult(applied), err
	})
	if err != nil {
		return err
	}

	// SES takes no idempotency key: the email is sent at most once (an
	// attempt that cannot tell whether it went out parks the event), by
	// the event that claimed it for the session, and its record is written
	// after it by every attempt of that event until one succeeds.
	err = effects.AtMostOnce(ctx, fx, effectWelcomeEmail, func(ctx context.Context, ik string) (string, error) {
		mine, err := s.putOwned(ctx, emailItem(Email{Event: key, Session: cs.ID, To: to, Template: templateWelcome}, false))
		switch {
		case err != nil:
			return "", effects.NotDone(err)
		case !mine:
			return "sent for checkout session " + cs.ID + " by another event", nil
		}
		return s.sendWelcome(ctx, to, ik)
	})
	if err != nil {
		return err
	}
	if _, err := s.putOwned(ctx, emailItem(Email{Event: key, Session: cs.ID, To: to, Template: templateWelcome}, true)); err != nil {
		return err
	}
	if customer == "" {
		return nil
	}

	return effects.DoResult(ctx, fx, effectCreateInvoice, func(ctx context.Context, _ string) (string, error) {
		id, err := s.billing.CreateInvoice(ctx, invoiceRequest{
			Customer:       customer,
			Description:    "Order " + cs.ID,
			Key:            order,
			Since:          ev.Created,
			IdempotencyKey: effects.IdempotencyKey(order, effectCreateInvoice),
			Metadata:       map[string]string{"checkout_session": cs.ID},
		})
		if err != nil {
			return "", err
		}
		if _, err := effects.PutOnce(ctx, s.db, s.cfg.Table, invoiceItem(Invoice{Event: key, Session: cs.ID, InvoiceID: id, Customer: customer})); err != nil {
			return "", err
		}
		return id, nil
	})
}

// checkoutKey is the key of checkout session id as a business object
// (stripe-checkout#cs_...): the welcome email and the invoice are keyed by
// it, whichever event brings the session.
func checkoutKey(id string) webhook.Key { return webhook.NewKey("stripe-checkout", id) }

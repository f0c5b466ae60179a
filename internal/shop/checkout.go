package shop

import (
	"context"
	"fmt"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/shop/shopevents"
	"github.com/hookinbox/hookinbox/webhook"
)

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
	key := ev.Key()

	err = effects.DoResult(ctx, fx, effectGrantAccess, func(ctx context.Context, _ string) (string, error) {
		if cs.Mode == "subscription" {
			return s.syncSubscription(ctx, ev, subID)
		}
		e := Entitlement{Holder: customer, Customer: customer, Source: sourcePurchase, SourceID: cs.ID, Active: true}
		if customer == "" {
			e.Holder, e.Email = GuestHolder(to), to
		}
		applied, err := effects.PutIfNewer(ctx, s.db, s.cfg.Table, entitlementItem(e), v)
		return effects.NewerResult(applied), err
	})
	if err != nil {
		return err
	}

	// SES takes no idempotency key: the email is sent at most once (an
	// attempt that cannot tell whether it went out parks the event), and
	// its record, a pure function of the event, is written after it by
	// every attempt until one succeeds.
	err = effects.AtMostOnce(ctx, fx, effectWelcomeEmail, func(ctx context.Context, ik string) (string, error) {
		return s.sendWelcome(ctx, to, ik)
	})
	if err != nil {
		return err
	}
	if _, err := effects.PutOnce(ctx, s.db, s.cfg.Table, emailItem(Email{Event: key, To: to, Template: templateWelcome})); err != nil {
		return err
	}
	if customer == "" {
		return nil
	}

	return effects.DoResult(ctx, fx, effectCreateInvoice, func(ctx context.Context, ik string) (string, error) {
		id, err := s.billing.CreateInvoice(ctx, InvoiceRequest{
			Customer:       customer,
			Description:    "Order " + cs.ID,
			Event:          key,
			Since:          ev.Created,
			IdempotencyKey: ik,
			Metadata:       map[string]string{"checkout_session": cs.ID},
		})
		if err != nil {
			return "", err
		}
		if _, err := effects.PutOnce(ctx, s.db, s.cfg.Table, invoiceItem(Invoice{Event: key, InvoiceID: id, Customer: customer})); err != nil {
			return "", err
		}
		return id, nil
	})
}

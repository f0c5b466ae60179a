package shop

import (
	"context"
	"fmt"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// subscription is the part of a Stripe subscription the shop reads.
type subscription struct {
	ID       string     `json:"id"`
	Object   string     `json:"object"`
	Customer expandable `json:"customer"`
	Status   string     `json:"status"`
}

func (s *subscription) object() (typ, id string) { return s.Object, s.ID }

// subscriptionChanged records the subscription as Stripe holds it now, and
// the access it gives its customer.
//
// The event says that the subscription changed, not reliably how it ended:
// Stripe's created time has one-second resolution and events of the same
// second carry no order (an update and a cancellation in one second can be
// delivered, and ordered by ID, either way). So the subscription is read
// from Stripe's API (GET /v1/subscriptions/{id}) and written with the time
// that read started as its version: a read started after the last change
// returns the current status, and a read started later always wins, so
// whatever the order and timing of the events the record ends in Stripe's
// actual current status. The start, not the answer, orders two reads: a
// read that started first but answered last may hold the older status.
// (Stripe's subscription carries no version of its own to use instead.) A status precedence (canceled beats active, ...) was the
// alternative; it needs no call, but it guesses, and a subscription that
// really went past_due → active in one second would end wrong.
func (s *Shop) subscriptionChanged(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	var sub subscription
	if err := parseObject(ev, "subscription", &sub); err != nil {
		return err
	}
	return effects.DoResult(ctx, fx, effectApplySubscription, func(ctx context.Context, _ string) (string, error) {
		return s.syncSubscription(ctx, ev, sub.ID)
	})
}

// syncSubscription reads subscription id from Stripe and writes its record
// and its customer's entitlement from it, both "only if newer" than what
// an earlier read wrote (version: the time the read started, in Unix
// milliseconds, then the event ID). result says which of the two writes
// applied.
func (s *Shop) syncSubscription(ctx context.Context, ev webhook.Event, id string) (result string, err error) {
	v := effects.Version{At: s.now().UnixMilli(), EventID: ev.ID}
	sub, err := s.billing.Subscription(ctx, id)
	if err != nil {
		return "", err
	}
	if sub.Customer == "" {
		return "", webhook.Permanent(fmt.Errorf("%s %s: subscription %s has no customer", ev.Type, ev.Key(), id))
	}
	subApplied, err := effects.PutIfNewer(ctx, s.db, s.cfg.Table, subscriptionItem(Subscription{
		ID: id, Status: sub.Status, Customer: sub.Customer,
	}), v)
	if err != nil {
		return "", err
	}
	accessApplied, err := effects.PutIfNewer(ctx, s.db, s.cfg.Table, entitlementItem(Entitlement{
		Holder: sub.Customer, Customer: sub.Customer,
		Source: sourceSubscription, SourceID: id, Active: grantsAccess(sub.Status),
	}), v)
	if err != nil {
		return "", err
	}
	return "subscription " + effects.NewerResult(subApplied) + ", access " + effects.NewerResult(accessApplied), nil
}

// grantsAccess reports whether a subscription in Stripe status gives its
// customer access: active, trialing and past_due (Stripe is still retrying
// the payment) do; incomplete, incomplete_expired, unpaid, canceled and
// paused do not.
func grantsAccess(status string) bool {
	switch status {
	case "active", "trialing", "past_due":
		return true
	}
	return false
}

package shop

import (
	"context"
	"fmt"

	"github.com/hookinbox/hookinbox/internal/effects"
	"github.com/hookinbox/hookinbox/internal/webhook"
)

// subscriptionChanged records the subscription's state and makes the
// customer's access follow it, both "only if newer", so deliveries in any
// order end with the state of the newest event.
func (s *Shop) subscriptionChanged(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	var sub subscription
	if err := parseObject(ev, "subscription", &sub); err != nil {
		return err
	}
	v, err := version(ev)
	if err != nil {
		return err
	}
	customer := string(sub.Customer)
	switch {
	case sub.ID == "":
		return webhook.Permanent(fmt.Errorf("%s %s: subscription has no id", ev.Type, ev.Key()))
	case customer == "":
		return webhook.Permanent(fmt.Errorf("%s %s: subscription %s has no customer", ev.Type, ev.Key(), sub.ID))
	case sub.Status == "":
		return webhook.Permanent(fmt.Errorf("%s %s: subscription %s has no status", ev.Type, ev.Key(), sub.ID))
	}

	err = fx.Do(ctx, effectApplySubscription, func(ctx context.Context, _ string) error {
		_, err := effects.PutIfNewer(ctx, s.db, s.cfg.Table, subscriptionItem(Subscription{
			ID: sub.ID, Status: sub.Status, Customer: customer,
		}), v)
		return err
	})
	if err != nil {
		return err
	}
	return fx.Do(ctx, effectSyncAccess, func(ctx context.Context, _ string) error {
		_, err := effects.PutIfNewer(ctx, s.db, s.cfg.Table, entitlementItem(entitlement{
			Customer:       customer,
			Active:         ev.Type != typeSubscriptionDeleted && grantsAccess(sub.Status),
			Source:         sourceSubscription,
			SubscriptionID: sub.ID,
		}), v)
		return err
	})
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

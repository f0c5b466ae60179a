package processorfn

import (
	"context"
	"testing"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/webhook"
)

type plainBusiness struct{}

func (plainBusiness) Handle(context.Context, webhook.Event, effects.Runner) error { return nil }

// TestEventTypes: the processor's metrics name the types a business that
// says so handles; for any other business, the types no sender chooses.
// Neither names a GitHub or Shopify type that is not handled.
func TestEventTypes(t *testing.T) {
	h := func(context.Context, webhook.Event, effects.Runner) error { return nil }
	tests := []struct {
		b    Business
		name string
		want map[[2]string]bool
	}{
		{NewMux().On("github", h, "push").On("stripe", h, "checkout.session.completed"), "a Mux", map[[2]string]bool{
			{"github", "push"}: true, {"stripe", "checkout.session.completed"}: true,
			{"github", "issues"}: false, {"stripe", "invoice.paid"}: false, {"shopify", "orders/paid"}: false,
		}},
		{plainBusiness{}, "a Business without Handles", map[[2]string]bool{
			{"stripe", "invoice.paid"}: true, {"adyen", "REPORT_AVAILABLE"}: true, {"standard", "contact.created"}: true, {"gopay", "notification"}: true,
			{"github", "push"}: false, {"shopify", "orders/paid"}: false, {"made-up", "x"}: false,
		}},
	}
	reg, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		known := eventTypes(tt.b, reg)
		for pt, want := range tt.want {
			if got := known(pt[0], pt[1]); got != want {
				t.Errorf("%s: %s %s named = %v, want %v", tt.name, pt[0], pt[1], got, want)
			}
		}
	}
}

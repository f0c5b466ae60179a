package stripeevent_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v76"

	"github.com/hookinbox/hookinbox/stripeevent"
	"github.com/hookinbox/hookinbox/webhook"
)

func fixture(t *testing.T, name string) webhook.Event {
	t.Helper()
	raw, err := os.ReadFile("../testdata/stripe/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return webhook.Event{Provider: "stripe", ID: "evt_fixture", Type: name, Created: time.Unix(1700000000, 0), Raw: raw}
}

func TestObject(t *testing.T) {
	ev := fixture(t, "checkout.session.completed")
	cs, err := stripeevent.Object[stripe.CheckoutSession](ev)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cs.ID, "cs_") || cs.Customer == nil || !strings.HasPrefix(cs.Customer.ID, "cus_") {
		t.Errorf("checkout session = id %q, customer %+v; want a cs_ session with its cus_ customer", cs.ID, cs.Customer)
	}
	se, err := stripeevent.Parse(ev)
	if err != nil || string(se.Type) != "checkout.session.completed" {
		t.Errorf("Parse: type %q, %v", se.Type, err)
	}

	sub, err := stripeevent.Object[stripe.Subscription](fixture(t, "customer.subscription.updated"))
	if err != nil || !strings.HasPrefix(sub.ID, "sub_") || sub.Status == "" {
		t.Errorf("subscription = %q status %q, %v", sub.ID, sub.Status, err)
	}
}

// An event pinned to another API version than stripe-go's still parses.
func TestOtherAPIVersion(t *testing.T) {
	ev := fixture(t, "invoice.paid")
	ev.Raw = []byte(strings.Replace(string(ev.Raw), `"api_version"`, `"api_version_was"`, 1))
	ev.Raw = []byte(strings.Replace(string(ev.Raw), `{`, `{"api_version":"2019-02-19",`, 1))
	if _, err := stripeevent.Object[stripe.Invoice](ev); err != nil {
		t.Errorf("an event of API version 2019-02-19: %v", err)
	}
}

func TestRefused(t *testing.T) {
	tests := []struct {
		name string
		ev   webhook.Event
		says string
	}{
		{"other provider", webhook.Event{Provider: "github", ID: "1", Raw: []byte(`{}`)}, "not a Stripe event"},
		{"not JSON", webhook.Event{Provider: "stripe", ID: "evt_1", Raw: []byte(`{`)}, "parse Stripe event"},
		{"no object", webhook.Event{Provider: "stripe", ID: "evt_1", Raw: []byte(`{"id":"evt_1","data":{}}`)}, "stripe#evt_1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := stripeevent.Object[stripe.Invoice](tt.ev)
			if err == nil || !webhook.IsPermanent(err) {
				t.Fatalf("err = %v, want a permanent error", err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err = %v, want it to say %q", err, tt.says)
			}
		})
	}
}

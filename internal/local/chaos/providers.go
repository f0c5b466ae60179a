package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/adyen"
	"github.com/hookinbox/hookinbox/provider/builtin"
	"github.com/hookinbox/hookinbox/provider/github"
	"github.com/hookinbox/hookinbox/provider/gopay"
	"github.com/hookinbox/hookinbox/provider/shopify"
	"github.com/hookinbox/hookinbox/provider/standard"
	"github.com/hookinbox/hookinbox/provider/stripe"

	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/webhook"
)

// DeliveryObject is the "object" of a corpus line that holds another
// provider's delivery rather than a Stripe event:
//
//	{"object":"hookinbox.delivery","provider":"shopify","id":"<event id>","type":"orders/paid","body":{...}}
//
// id is the event's part of the inbox key as the receiver derives it: the
// X-GitHub-Delivery, X-Shopify-Event-Id or webhook-id header, or Adyen's
// "<pspReference>-<eventCode>" (an Adyen body is a notification with that
// one item). chaos signs body as the provider does when it delivers it.
//
// A GoPay line is a payment notification: id is the payment id, type is
// "notification", and body is the payment as GoPay's API serves it when
// it notifies ({"id":3000012345,"order_number":"...","state":"PAID",...}).
// GoPay signs nothing and notifies with GET ?id=<payment id> only; the
// processor fetches the payment. chaos sets body on the GoPay stand-in of
// a local stack (or of `hookinbox dev` with --url) before it notifies; a
// real GoPay account must hold the payment already.
const DeliveryObject = "hookinbox.delivery"

// providerEvent reads one DeliveryObject line.
func providerEvent(line []byte) (Event, error) {
	var d struct {
		Provider string          `json:"provider"`
		ID       string          `json:"id"`
		Type     string          `json:"type"`
		Body     json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(line, &d); err != nil {
		return Event{}, fmt.Errorf("%s: %v", DeliveryObject, err)
	}
	p, known := registry.Lookup(d.Provider)
	switch {
	case !known:
		return Event{}, fmt.Errorf("%s: provider %q: want one of %s", DeliveryObject, d.Provider, strings.Join(registry.Names(), ", "))
	case d.Type == "":
		return Event{}, fmt.Errorf("%s %s: no type", d.Provider, d.ID)
	case len(d.Body) == 0:
		return Event{}, fmt.Errorf("%s %s: no body", d.Provider, d.ID)
	}
	if err := webhook.ValidateEventID(d.ID); err != nil {
		return Event{}, fmt.Errorf("%s event id: %w", d.Provider, err)
	}
	var body bytes.Buffer
	if err := json.Compact(&body, d.Body); err != nil {
		return Event{}, fmt.Errorf("%s %s: body: %v", d.Provider, d.ID, err)
	}
	ev := Event{Provider: d.Provider, ID: d.ID, Type: d.Type, Raw: body.Bytes()}
	if p.Webhook().IDOnly {
		if _, err := ev.GoPayPayment(); err != nil {
			return Event{}, err
		}
	}
	return ev, nil
}

// GoPayPayment returns the payment of a GoPay notification: its body,
// checked to be a payment with the notification's id and a state.
func (e Event) GoPayPayment() (standin.GoPayPayment, error) {
	var p standin.GoPayPayment
	switch {
	case e.Provider != gopay.Name:
		return p, fmt.Errorf("%s is not a GoPay notification", e.Key())
	case e.Type != gopay.Notification:
		return p, fmt.Errorf("gopay %s: type %q, want %q", e.ID, e.Type, gopay.Notification)
	}
	if err := gopay.CheckID(e.ID); err != nil {
		return p, err
	}
	if err := json.Unmarshal(e.Raw, &p); err != nil || strconv.FormatInt(p.ID, 10) != e.ID || p.State == "" {
		return p, fmt.Errorf("gopay %s: body is not a payment with id %s and a state", e.ID, e.ID)
	}
	return p, nil
}

// deliveryLine returns ev as a DeliveryObject line.
func deliveryLine(ev Event) []byte {
	b, _ := json.Marshal(struct {
		Object   string          `json:"object"`
		Provider string          `json:"provider"`
		ID       string          `json:"id"`
		Type     string          `json:"type"`
		Body     json.RawMessage `json:"body"`
	}{DeliveryObject, ev.Provider, ev.ID, ev.Type, ev.Raw})
	return b
}

// Secrets are the signing secrets of each provider a stack's receiver
// accepts, by provider name (a Stripe list may hold several).
type Secrets map[string][]string

// LocalSecrets are the secrets of a Local stack's receiver: they sign on
// this machine only.
var LocalSecrets = Secrets{
	stripe.Name:   {LocalSecret},
	github.Name:   {"local-hookinbox-chaos-github"},
	shopify.Name:  {"local-hookinbox-chaos-shopify-secret"},
	standard.Name: {"whsec_bG9jYWwtaG9va2luYm94LWNoYW9zLXN0YW5kYXJk"},
	adyen.Name:    {"6C6F63616C2D686F6F6B696E626F782D6368616F732D616479656E2D6B657921"},
}

// env returns the receiver's variables for s (each provider's SecretEnv).
func (s Secrets) env() map[string]string {
	env := map[string]string{}
	for _, p := range registry.All() {
		if v := s[p.Name()]; len(v) > 0 {
			env[p.Webhook().SecretEnv] = strings.Join(v, ",")
		}
	}
	return env
}

// Signed returns the delivery of ev at at, signed with s as ev's provider
// signs it (provider.Provider.Sign).
func (s Secrets) Signed(ev Event, at time.Time) (webhook.Request, error) {
	p, ok := registry.Lookup(ev.Provider)
	if !ok {
		return webhook.Request{}, fmt.Errorf("chaos cannot sign %s deliveries", ev.Provider)
	}
	secrets := s[ev.Provider]
	if len(secrets) == 0 && !p.Webhook().Unsigned {
		return webhook.Request{}, fmt.Errorf("no %s signing secret for %s", ev.Provider, ev.Key())
	}
	req, err := p.Sign(provider.TestEvent{ID: ev.ID, Type: ev.Type, Body: ev.Raw}, secrets, at)
	if err != nil {
		return webhook.Request{}, fmt.Errorf("%s: %w", ev.Key(), err)
	}
	return req, nil
}

// registry is every provider a corpus may hold.
var registry = mustRegistry()

func mustRegistry() *provider.Registry {
	reg, err := builtin.Registry()
	if err != nil {
		panic(err) // hookinbox's own providers: names are unique
	}
	return reg
}

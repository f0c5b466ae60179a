package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/builtin"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/webhook"
)

// deliveryObject is the "object" of a corpus line that holds another
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
const deliveryObject = "hookinbox.delivery"

// providerEvent reads one deliveryObject line.
func providerEvent(line []byte) (Event, error) {
	var d struct {
		Provider string          `json:"provider"`
		ID       string          `json:"id"`
		Type     string          `json:"type"`
		Body     json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(line, &d); err != nil {
		return Event{}, fmt.Errorf("%s: %v", deliveryObject, err)
	}
	p, known := registry.Lookup(d.Provider)
	switch {
	case !known:
		return Event{}, fmt.Errorf("%s: provider %q: want one of %s", deliveryObject, d.Provider, strings.Join(registry.Names(), ", "))
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
		if err := checkNotification(p, ev); err != nil {
			return Event{}, err
		}
	}
	return ev, nil
}

// checkNotification checks a line of an id-only provider: its delivery,
// as the provider signs it, is the notification of this key and type,
// and its body, the object the provider's API serves, has that id.
func checkNotification(p provider.Provider, ev Event) error {
	req, err := senders[p.Name()].Sign(sample.Event{ID: ev.ID, Body: ev.Raw}, nil, time.Now())
	if err != nil {
		return fmt.Errorf("%s: %w", ev.Key(), err)
	}
	v, err := p.Verifier(nil, &provider.Env{})
	if err != nil {
		return err
	}
	evs, err := v.Verify(context.Background(), req)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", ev.Key(), err)
	case len(evs) != 1 || evs[0].Key() != ev.Key():
		return fmt.Errorf("%s: the provider would notify %v", ev.Key(), evs)
	case evs[0].Type != ev.Type:
		return fmt.Errorf("%s: type %q, want %q", ev.Key(), ev.Type, evs[0].Type)
	}
	var obj struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(ev.Raw, &obj) != nil || strings.Trim(string(obj.ID), `"`) != ev.ID {
		return fmt.Errorf("%s: body is not the object with id %s", ev.Key(), ev.ID)
	}
	return nil
}

// deliveryLine returns ev as a deliveryObject line.
func deliveryLine(ev Event) []byte {
	b, _ := json.Marshal(struct {
		Object   string          `json:"object"`
		Provider string          `json:"provider"`
		ID       string          `json:"id"`
		Type     string          `json:"type"`
		Body     json.RawMessage `json:"body"`
	}{deliveryObject, ev.Provider, ev.ID, ev.Type, ev.Raw})
	return b
}

// Secrets are the signing secrets of each provider a stack's receiver
// accepts, by provider name (a Stripe list may hold several).
type Secrets map[string][]string

// LocalSecrets are the secrets of a Local stack's receiver, every signed
// provider's local ones (pipeline.LocalEnv): they sign on this machine
// only.
var LocalSecrets = localSecrets()

func localSecrets() Secrets {
	local := pipeline.LocalEnv("")
	s := Secrets{}
	for _, p := range registry.All() {
		if !p.Webhook().Unsigned {
			s[p.Name()] = envconfig.Split(local[p.Webhook().SecretEnv])
		}
	}
	return s
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
// signs it (sample.Sender.Sign).
func (s Secrets) Signed(ev Event, at time.Time) (webhook.Request, error) {
	p, ok := registry.Lookup(ev.Provider)
	if !ok {
		return webhook.Request{}, fmt.Errorf("chaos cannot sign %s deliveries", ev.Provider)
	}
	secrets := s[ev.Provider]
	if len(secrets) == 0 && !p.Webhook().Unsigned {
		return webhook.Request{}, fmt.Errorf("no %s signing secret for %s", ev.Provider, ev.Key())
	}
	req, err := senders[p.Name()].Sign(sample.Event{ID: ev.ID, Type: ev.Type, Body: ev.Raw}, secrets, at)
	if err != nil {
		return webhook.Request{}, fmt.Errorf("%s: %w", ev.Key(), err)
	}
	return req, nil
}

// registry is every provider a corpus may hold, and senders how each
// signs, by name.
var registry, senders = mustRegistry(), pipeline.Senders()

func mustRegistry() *provider.Registry {
	reg, err := builtin.Registry()
	if err != nil {
		panic(err) // hookinbox's own providers: names are unique
	}
	return reg
}

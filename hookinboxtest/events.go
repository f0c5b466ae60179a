package hookinboxtest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/provider/sample"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/webhook"
)

// Event is one event a provider delivers: Deliver signs it as the
// provider does and hands it to the receiver. Sample makes one from a
// provider's realistic payloads with fresh IDs.
type Event struct {
	// Provider is the receiver's name of the provider: one of
	// hookinbox's, or one of your own (Options.Providers).
	Provider string
	// ID is the event's part of its inbox key (the provider's event or
	// delivery id, an id-only provider's object id).
	ID string
	// Type is the event type the business sees (webhook.Event.Type).
	Type string
	// Body is the payload as the provider sends it; for an id-only
	// provider, the object its API serves.
	Body []byte

	// sampled is the event as Sample made it: its variant and what the
	// provider's API serves about it.
	sampled sample.Event
}

// Key returns the event's inbox key, "<provider>#<id>".
func (e Event) Key() webhook.Key { return webhook.NewKey(e.Provider, e.ID) }

// With is a way of sending a sample (Variant, Value).
type With func(*sample.Event)

// Variant sends the sample as the provider's variant name (one of its
// Sender's Variants: "thin" for a Stripe thin event notification, whose
// v2 event and object Deliver first puts on the Stripe stand-in).
func Variant(name string) With { return func(ev *sample.Event) { ev.Variant = name } }

// Value sets one of the provider's Sender Options ("customer":
// "cus_1"), as `hookinbox send --customer cus_1` does.
func Value(name, value string) With {
	return func(ev *sample.Event) {
		if ev.Options == nil {
			ev.Options = map[string]string{}
		}
		ev.Options[name] = value
	}
}

// Sample returns the sample payload name of the provider (hookinbox's or
// your own): testdata/<provider>/<name>.json (a / in the name is a _ in
// the file's: orders/paid is orders_paid.json) in the test's directory,
// else at your module's root, else in hookinbox's, as `hookinbox send
// <provider> <name>` reads it. The provider gives it fresh IDs
// (sample.Sender.Sample), so no two samples share an event, an order, a
// session or a payment; a provider without a Sample sends it as it is.
func (p *Pipeline) Sample(t testing.TB, providerName, name string, with ...With) Event {
	t.Helper()
	pr, ok := p.senders[providerName]
	if !ok {
		t.Fatalf("hookinboxtest: no provider %q (Options.Providers)", providerName)
	}
	var ev sample.Event
	for _, w := range with {
		w(&ev)
	}
	roots := []string{"."}
	if root, err := moduleRoot(); err == nil {
		roots = append(roots, root)
	}
	ev, err := pipeline.Sample(pr, name, ev, roots...)
	if err != nil {
		t.Fatalf("hookinboxtest: %v", err)
	}
	return Event{Provider: providerName, ID: ev.ID, Type: ev.Type, Body: ev.Body, sampled: ev}
}

// moduleRoot returns the nearest directory at or above the working
// directory with a go.mod.
func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod at or above %s", wd)
		}
	}
}

// Deliver signs ev now with the local secrets, as its provider signs
// (sample.Sender.Sign, your own providers' too), hands it to the
// receiver as API Gateway would, and returns the receiver's answer:
// "accepted" or "duplicate" (or the provider's own answer, Adyen's
// "[accepted]" for both). The provider's local stand-in first takes
// what its API serves about the event (a payment, a thin event's
// object). Any answer but 200 fails the test.
func (p *Pipeline) Deliver(t testing.TB, ev Event) string {
	t.Helper()
	req, err := p.request(ev, time.Now())
	if err != nil {
		t.Fatalf("hookinboxtest: %s: %v", ev.Key(), err)
	}
	resp := p.p.Send(t, req)
	if resp.StatusCode != 200 {
		t.Fatalf("hookinboxtest: the receiver answered %s with %d %s", ev.Key(), resp.StatusCode, resp.Body)
	}
	var out struct{ Status string }
	if json.Unmarshal([]byte(resp.Body), &out) == nil && out.Status != "" {
		return out.Status
	}
	return resp.Body
}

// request returns the API Gateway request of ev's delivery at at, signed
// by its provider with the secret the receiver holds.
func (p *Pipeline) request(ev Event, at time.Time) (events.APIGatewayV2HTTPRequest, error) {
	pr, ok := p.senders[ev.Provider]
	if !ok {
		return events.APIGatewayV2HTTPRequest{}, fmt.Errorf("hookinboxtest cannot deliver %q events: no such provider (Options.Providers)", ev.Provider)
	}
	sent := ev.sampled
	sent.ID, sent.Type, sent.Body = ev.ID, ev.Type, ev.Body
	return p.p.Stack.Signed(pr, sent, at)
}

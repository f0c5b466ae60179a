package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/provider"

	"github.com/google/go-cmp/cmp"
)

func TestReadEvents(t *testing.T) {
	in := `{"id":"evt_1","object":"event","type":"checkout.session.completed","data":{"object":{}}}

{"object":"list","data":[{"id":"evt_3","object":"event","type":"invoice.paid"},{"id":"evt_2","object":"event","type":"customer.created"}],"has_more":false}
`
	evs, err := ReadEvents(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, string(e.Key())+" "+e.Type)
	}
	want := []string{"stripe#evt_1 checkout.session.completed", "stripe#evt_3 invoice.paid", "stripe#evt_2 customer.created"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !bytes.HasPrefix(evs[1].Raw, []byte(`{"id":"evt_3"`)) {
		t.Errorf("a list's event keeps its own bytes: %s", evs[1].Raw)
	}

	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", "nope\n", "line 1: not a JSON object"},
		{"twice", `{"id":"evt_1","type":"x"}` + "\n" + `{"id":"evt_1","type":"x"}`, "line 2: event evt_1 is on line 1 already"},
		{"no type", `{"id":"evt_1"}`, "has no type"},
		{"bad id", `{"id":"evt 1","type":"x"}`, "event id"},
		{"not an event", `{"id":"cus_1","object":"customer","type":"x"}`, "not a Stripe event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReadEvents(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadEvents error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestGenerateIsRealisticAndDeterministic(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	a, b := Generate(120, 42, at), Generate(120, 42, at)
	if len(a) != 120 || !cmp.Equal(a, b) {
		t.Fatalf("Generate(120, 42) gave %d events, same twice: %v", len(a), cmp.Equal(a, b))
	}
	var lines bytes.Buffer
	for _, l := range a {
		lines.Write(l)
		lines.WriteByte('\n')
	}
	evs, err := ReadEvents(&lines)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, e := range evs {
		types[e.Provider+" "+e.Type]++
	}
	for _, typ := range []string{"checkout.session.completed", "checkout.session.async_payment_succeeded",
		"customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted",
		"charge.refunded", "invoice.paid", "customer.created"} {
		if types["stripe "+typ] == 0 {
			t.Errorf("no Stripe %s in 120 generated events: %v", typ, types)
		}
	}
	for _, typ := range []string{"shopify orders/create", "shopify orders/updated", "shopify orders/paid",
		"adyen AUTHORISATION", "adyen REFUND", "github issues", "standard invoice.paid", "gopay notification"} {
		if types[typ] == 0 {
			t.Errorf("no %s in 120 generated events: %v", typ, types)
		}
	}
}

// TestProviderDeliveries reads the other providers' corpus lines and signs
// each delivery as its provider does: the receiver's own verifiers accept
// it, under the key the corpus names.
func TestProviderDeliveries(t *testing.T) {
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	var lines bytes.Buffer
	for _, l := range Generate(400, 7, at) {
		lines.Write(l)
		lines.WriteByte('\n')
	}
	evs, err := ReadEvents(&lines)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, ev := range evs {
		if seen[ev.Provider] {
			continue
		}
		seen[ev.Provider] = true
		p, ok := registry.Lookup(ev.Provider)
		if !ok {
			t.Fatalf("%s: no verifier", ev.Provider)
		}
		v, err := p.Verifier(LocalSecrets[ev.Provider], &provider.Env{})
		if err != nil {
			t.Fatal(err)
		}
		req, err := LocalSecrets.Signed(ev, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		got, err := v.Verify(context.Background(), req)
		if err != nil {
			t.Errorf("%s: %v", ev.Key(), err)
			continue
		}
		if len(got) == 0 || got[0].Key() != ev.Key() {
			t.Errorf("%s: the verifier keys it %v", ev.Key(), got)
		}
	}
	if len(seen) != 6 {
		t.Errorf("providers in 400 generated events: %v, want stripe and 5 others", seen)
	}

	// Every id-only provider's notification is read alike: GoPay's, Mollie's.
	idOnly := `{"object":"hookinbox.delivery","provider":"gopay","id":"3000000001","type":"notification","body":{"id":3000000001,"state":"PAID"}}
{"object":"hookinbox.delivery","provider":"mollie","id":"tr_chaos1","type":"notification","body":{"resource":"payment","id":"tr_chaos1","status":"paid"}}`
	if got, err := ReadEvents(strings.NewReader(idOnly)); err != nil || len(got) != 2 {
		t.Errorf("ReadEvents of id-only notifications = %v, %v; want both", got, err)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"ftp", `{"object":"hookinbox.delivery","provider":"ftp","id":"1","type":"x","body":{}}`, `provider "ftp"`},
		{"gopay type", `{"object":"hookinbox.delivery","provider":"gopay","id":"1","type":"x","body":{"id":1,"state":"PAID"}}`, `want "notification"`},
		{"gopay id", `{"object":"hookinbox.delivery","provider":"gopay","id":"01","type":"notification","body":{"id":1,"state":"PAID"}}`, "positive decimal"},
		{"gopay body", `{"object":"hookinbox.delivery","provider":"gopay","id":"2","type":"notification","body":{"id":1,"state":"PAID"}}`, "not the object with id 2"},
		{"mollie id", `{"object":"hookinbox.delivery","provider":"mollie","id":"x1","type":"notification","body":{"id":"x1","status":"paid"}}`, "not a payment id"},
		{"no body", `{"object":"hookinbox.delivery","provider":"github","id":"d1","type":"ping"}`, "no body"},
		{"bad id", `{"object":"hookinbox.delivery","provider":"github","id":"d 1","type":"ping","body":{}}`, "event id"},
		{"twice", `{"object":"hookinbox.delivery","provider":"github","id":"d1","type":"ping","body":{}}` + "\n" +
			`{"object":"hookinbox.delivery","provider":"github","id":"d1","type":"ping","body":{}}`, "line 2: event github#d1 is on line 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ReadEvents(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadEvents error = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestGenerateObjectsAreTheirCustomers: every Stripe object of a corpus
// (session, payment intent, charge, invoice, subscription) belongs to one
// customer, whichever event names it, and an invoice's subscription is
// its customer's.
func TestGenerateObjectsAreTheirCustomers(t *testing.T) {
	owner := map[string]string{} // object ID → customer
	var invoices int
	for i, line := range Generate(1000, 20261130, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)) {
		var ev struct {
			Type string `json:"type"`
			Data struct {
				Object struct {
					ID, Object, Customer, Subscription string
					PaymentIntent                      any `json:"payment_intent"`
				} `json:"object"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &ev) != nil || ev.Type == "" {
			continue // another provider's delivery line
		}
		obj := ev.Data.Object
		cus := obj.Customer
		if obj.Object == "customer" {
			cus = obj.ID
		}
		pi, _ := obj.PaymentIntent.(string)
		for _, id := range []string{obj.ID, obj.Subscription, pi} {
			if id == "" || id == cus {
				continue
			}
			if prev, ok := owner[id]; ok && prev != cus {
				t.Errorf("line %d: %s %s of %s, named with %s before", i+1, ev.Type, id, cus, prev)
			}
			owner[id] = cus
		}
		if ev.Type == "invoice.paid" {
			invoices++
		}
	}
	if invoices < 10 {
		t.Errorf("%d invoice.paid events, want a corpus with many", invoices)
	}
}

// Package sample is the tooling contract of a provider: how `hookinbox
// send`, load and chaos and hookinboxtest sign and send its test
// deliveries. A provider offers it as a Sender; the functions never call
// it, and each provider keeps its Sender in a file of its own (its
// sample.go), so the Lambda bootstraps leave it out.
//
// A Sender signs exactly as the provider signs (Sign), and may make a
// sample payload the event the provider would send now, with fresh ids
// (Sample), so that no two samples share an event, an order or a
// payment. The helpers (UUID, Token, Digits, FreshID, ReplaceString) make
// such ids. Everything here is safe for concurrent use and never imports
// package testing: the CLI links it.
package sample

import (
	"time"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Sender is how tools send one provider's test deliveries.
type Sender struct {
	// Provider is the provider whose deliveries these are.
	Provider provider.Provider
	// Sign returns the delivery of ev as the provider sends it, signed
	// with secrets at at: the one signer send, load, chaos and
	// hookinboxtest deliver through.
	Sign func(ev Event, secrets []string, at time.Time) (webhook.Request, error)
	// Sample returns ev as the provider would send it now: when ev.Fresh,
	// with fresh ids wherever a new event would have them; ev.ID, when
	// set, is the event's id where a sender chooses it (a delivery id
	// header, a Stripe event id); ev.Options applied. Its ID and Type are
	// what the event is keyed and handled under, and API holds what the
	// provider's API serves about it. Nil: payloads are sent as they are.
	Sample func(ev Event) (Event, error)
	// Variants are the ways of sending a delivery besides the usual one
	// (GitHub's "form"): `hookinbox send` has a bool flag for each
	// (Event.Variant).
	Variants []Flag
	// Options are the values a sample takes (Stripe's "customer"):
	// `hookinbox send` has a string flag for each (Event.Options).
	Options []Flag
	// Help says, in `hookinbox send`'s help, how a delivery is signed and
	// what the command line gives it (lines of at most 64 columns);
	// Examples are its example command lines there.
	Help     string
	Examples []string
}

// Flag is one `hookinbox send` flag of a provider: a variant or an
// option.
type Flag struct {
	Name  string // the flag, "form"
	Usage string // what it does, for its help
}

// Event is one event to send as its provider would (Sender.Sign).
type Event struct {
	// ID is the event's part of its key (a delivery id header, a message
	// id); "" lets the provider make a fresh one as it does. A provider
	// whose id is in the body (Stripe, Adyen) reads it from there.
	ID string
	// Type is the event type for a provider that sends it beside the body
	// (GitHub, Shopify); "" takes it from File. Given to Sample, the type
	// asked for: a provider may send its sample under it (Stripe).
	Type string
	// Body is the payload as the provider sends it; for an IDOnly
	// provider, the object its API serves (Sign sends only its id).
	Body []byte
	// File is the base name of the file Body was read from, if any
	// (testdata/github/issues.json: "issues.json").
	File string
	// Variant is the Name of one of the Sender's Variants, or "".
	Variant string
	// Options are values of the Sender's Options, by name.
	Options map[string]string
	// Fresh says Body is a sample payload sent by name (`hookinbox send
	// shopify orders/paid`): Sample gives it fresh ids, as a new event
	// about a new object would have (Shopify: the order's).
	Fresh bool
	// KeepID says a file's event keeps the id in its body (`hookinbox
	// send --keep-id`); otherwise Sample may give it a fresh one.
	KeepID bool
	// API is what the provider's API serves about the event when it
	// notifies, by API path (Stripe's thin event and its object, a GoPay
	// payment): the local stand-ins take it before the delivery (Sample
	// fills it).
	API map[string][]byte
}

// Sampled returns ev as s would send it now (Sample), or as it is when s
// has no Sample.
func (s Sender) Sampled(ev Event) (Event, error) {
	if s.Sample == nil {
		return ev, nil
	}
	return s.Sample(ev)
}

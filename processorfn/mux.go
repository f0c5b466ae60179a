package processorfn

import (
	"context"
	"fmt"
	"slices"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// Mux is a Business that dispatches each event by its provider and type to
// the handler registered for them, before anything reads the payload:
// an event of a type with no handler ends IGNORED (webhook.ErrNoHandler)
// whatever its body holds, and a handler decodes only the events it was
// registered for. So a payload the business never acts on (a report
// notification whose amount is a string, a field missing from a type you
// do not handle) cannot park an event or fire the DLQ alarm.
//
// The processor also asks a Mux which types it handles (Handles): only
// those become a metric's EventType dimension, every other type is counted
// as "other", so a type chosen by a sender (GitHub's and Shopify's are
// unsigned headers) cannot mint a metric.
//
// Register every handler with On before the Mux handles its first event;
// after that a Mux is only read and is safe for concurrent use.
type Mux struct {
	routes map[route]handlerFunc
}

type route struct{ provider, eventType string }

// handlerFunc runs the effects of one event, as Business.Handle does.
type handlerFunc = func(ctx context.Context, ev webhook.Event, fx effects.Runner) error

// NewMux returns a Mux with no handlers.
func NewMux() *Mux { return &Mux{routes: map[route]handlerFunc{}} }

// On registers h for the events of provider ("stripe", "shopify", ...)
// whose type is one of eventTypes, and returns m. h runs the effects of
// such an event as Business.Handle does. Registering a provider
// and type twice panics: it is a programming error.
func (m *Mux) On(provider string, h func(ctx context.Context, ev webhook.Event, fx effects.Runner) error, eventTypes ...string) *Mux {
	for _, t := range eventTypes {
		r := route{provider, t}
		if _, dup := m.routes[r]; dup {
			panic(fmt.Sprintf("processorfn: Mux: %s %s registered twice", provider, t))
		}
		m.routes[r] = h
	}
	return m
}

// Handle implements Business: it runs the handler registered for the
// event's provider and type, or returns an error wrapping
// webhook.ErrNoHandler without looking at the payload.
func (m *Mux) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	h, ok := m.routes[route{ev.Provider, ev.Type}]
	if !ok {
		return fmt.Errorf("%s %s %s: %w", ev.Provider, ev.Type, ev.Key(), webhook.ErrNoHandler)
	}
	return h(ctx, ev, fx)
}

// Handles reports whether a handler is registered for provider and
// eventType.
func (m *Mux) Handles(provider, eventType string) bool {
	_, ok := m.routes[route{provider, eventType}]
	return ok
}

// EventTypes returns the event types registered for each provider, each
// list sorted: what the business file's EventTypes must list
// (hookinboxtest.CheckEventTypes), so the reconciler looks for them.
func (m *Mux) EventTypes() map[string][]string {
	types := map[string][]string{}
	for r := range m.routes {
		types[r.provider] = append(types[r.provider], r.eventType)
	}
	for _, list := range types {
		slices.Sort(list)
	}
	return types
}

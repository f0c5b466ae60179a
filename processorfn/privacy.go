package processorfn

import (
	"context"
	"errors"
	"log/slog"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// privacyRequests acts on the privacy requests providers send as events
// (provider.PrivacyRequester: Shopify's compliance webhooks) whether or
// not the business handles them. The business and the destinations see
// the event first (a handler it registers for the topic erases its own
// records); then, whatever they answered, an erasure removes what
// hookinbox keeps of the people it names, the request's own payload last
// once they are done with it, and a data request logs what hookinbox
// holds about them. Every other event goes to next.
type privacyRequests struct {
	next       Business
	requesters map[string]provider.PrivacyRequester
	eraser     *privacy.Eraser // nil: no subject key is set
	log        *slog.Logger
}

// requesters returns the providers of reg that send privacy requests.
func requesters(reg *provider.Registry) map[string]provider.PrivacyRequester {
	out := map[string]provider.PrivacyRequester{}
	for _, p := range reg.All() {
		if r, ok := p.(provider.PrivacyRequester); ok {
			out[p.Name()] = r
		}
	}
	return out
}

func (p privacyRequests) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	var req provider.PrivacyRequest
	r, ok := p.requesters[ev.Provider]
	if ok {
		req, ok = r.PrivacyRequest(ev)
	}
	if !ok {
		return p.next.Handle(ctx, ev, fx)
	}
	// The request is carried out whatever the business or a destination
	// answered; their error comes back with its own, so they retry.
	nerr := p.next.Handle(ctx, ev, fx)
	if errors.Is(nerr, webhook.ErrNoHandler) {
		nerr = nil
	}
	if p.eraser == nil {
		return errors.Join(nerr, webhook.Permanent(privacy.ErrNoKey))
	}
	log := p.log.With("key", ev.Key().String(), "type", ev.Type)
	if !req.Erase {
		rep, err := p.eraser.Export(ctx, req.Subjects)
		if err != nil {
			return errors.Join(nerr, err)
		}
		log.Info("data request: what hookinbox holds (hookinbox export --subject ... prints it in full)",
			"subject_hash", rep.SubjectHash, "events", len(rep.Events), "copies", rep.Copies, "event_keys", eventKeys(rep))
		return nerr
	}
	erase := privacy.Request{Subjects: req.Subjects, By: ev.Provider + " " + ev.Type + " " + ev.Key().String(), Last: ev.Key(), KeepLast: nerr != nil}
	if req.All {
		erase.Provider = ev.Provider
	}
	rep, err := p.eraser.Erase(ctx, erase)
	if err != nil {
		return errors.Join(nerr, err)
	}
	log.Info("erased on request", "subject_hash", rep.SubjectHash, "events", len(rep.Events), "copies", rep.Copies)
	return nerr
}

// eventKeys returns the keys of r's events.
func eventKeys(r privacy.Report) []string {
	keys := make([]string, len(r.Events))
	for i, e := range r.Events {
		keys[i] = e.Key.String()
	}
	return keys
}

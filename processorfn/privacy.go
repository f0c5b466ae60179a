package processorfn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// privacyRequests acts on the privacy requests providers send as events
// (provider.Webhook.PrivacyRequest: Shopify's compliance webhooks) whether or
// not the business handles them. A request whose body is not of its
// topic's shape is refused before anything runs: parked, with the reason.
// Otherwise the business and the destinations see the event first (a
// handler it registers for the topic erases its own records); then,
// whatever they answered, an erasure removes what hookinbox keeps of the
// people or the shop it names, a page at a time across attempts
// (privacy.ErrMore), the request's own payload once it is finished, and a
// data request records what hookinbox holds about them (hookinbox export
// --requests prints it). Every other event goes to next.
type privacyRequests struct {
	next       Business
	requesters map[string]func(webhook.Event) (provider.PrivacyRequest, bool, error)
	eraser     *privacy.Eraser // nil: no subject key is set
	log        *slog.Logger
}

// requesters returns the providers of reg that send privacy requests.
func requesters(reg *provider.Registry) map[string]func(webhook.Event) (provider.PrivacyRequest, bool, error) {
	out := map[string]func(webhook.Event) (provider.PrivacyRequest, bool, error){}
	for _, p := range reg.All() {
		if r := p.Webhook().PrivacyRequest; r != nil {
			out[p.Name()] = r
		}
	}
	return out
}

func (p privacyRequests) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	r, ok := p.requesters[ev.Provider]
	if !ok {
		return p.next.Handle(ctx, ev, fx)
	}
	req, ok, err := r(ev)
	if !ok {
		return p.next.Handle(ctx, ev, fx)
	}
	log := p.log.With("key", ev.Key().String(), "type", ev.Type)
	if err != nil {
		log.Warn("privacy request refused: nothing erased or listed", "reason", err.Error())
		return webhook.Permanent(fmt.Errorf("privacy request refused: %w", err))
	}
	// The request is carried out whatever the business or a destination
	// answered; their error comes back with its own, so they retry.
	nerr := p.next.Handle(ctx, ev, fx)
	if errors.Is(nerr, webhook.ErrNoHandler) {
		nerr = nil
	}
	if p.eraser == nil {
		// Parks once the business and the destinations are done.
		return destination.Combine(nerr, webhook.Permanent(privacy.ErrNoKey))
	}
	by := ev.Provider + " " + ev.Type + " " + ev.Key().String()
	within := privacy.Within{Provider: ev.Provider, Account: req.Account}
	if !req.Erase {
		rep, err := p.eraser.AnswerDataRequest(ctx, req.Subjects, within, by, req.Reference)
		if err != nil {
			return errors.Join(nerr, err)
		}
		log.Info("data request: what hookinbox holds is recorded (hookinbox export --requests prints it)",
			"subject_hash", rep.SubjectHash, "events", rep.Found(), "waiting", rep.Waiting)
		return nerr
	}
	rep, err := p.eraser.Erase(ctx, privacy.Request{Subjects: req.Subjects, By: by, ID: ev.Key(), Within: within})
	attrs := []any{"subject_hash", rep.SubjectHash, "events", rep.Found(), "copies", rep.Copies, "waiting", rep.Waiting, "queued", rep.Queued}
	if errors.Is(err, privacy.ErrMore) {
		log.Info("erasing on request: goes on at the next attempt", attrs...)
		return errors.Join(nerr, err)
	}
	if err != nil {
		return errors.Join(nerr, err)
	}
	log.Info("erased on request; events not finished are erased once they are", attrs...)
	return nerr
}

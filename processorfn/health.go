package processorfn

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/hookinbox/hookinbox/provider/stripe"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/webhook"
)

// StripeEventGenerationFailureResolved is the type of Stripe's thin event
// that says Stripe could not create some events, which will therefore
// never be delivered nor listed on /v1/events (so the reconciler cannot
// find them either).
const StripeEventGenerationFailureResolved = "v2.core.health.event_generation_failure.resolved"

// stripeHealth tells the operator about StripeEventGenerationFailureResolved
// before the business sees any event: an error log line naming the
// affected event type and object, and the StripeEventsNotGenerated metric,
// which the template alarms on. The event then ends DONE; what to do is in
// docs/operations.md. Every other event goes to next.
type stripeHealth struct {
	next    Business
	metrics *metrics.Recorder
	log     *slog.Logger
}

func (s stripeHealth) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	if ev.Provider != stripe.Name || ev.Type != StripeEventGenerationFailureResolved {
		return s.next.Handle(ctx, ev, fx)
	}
	// The processor's fetch hands the v2 event's data over as data.object.
	var view struct {
		Data struct {
			Object struct {
				AlertID    string `json:"alert_id"`
				Severity   string `json:"severity"`
				ResolvedAt string `json:"resolved_at"`
				Summary    string `json:"summary"`
				Impact     struct {
					Context       string `json:"context"`
					EventType     string `json:"event_type"`
					RelatedObject struct {
						ID   string `json:"id"`
						Type string `json:"type"`
					} `json:"related_object"`
				} `json:"impact"`
			} `json:"object"`
		} `json:"data"`
	}
	_ = json.Unmarshal(ev.Raw, &view) // what is missing is logged empty: the alert still counts
	d, impact := view.Data.Object, view.Data.Object.Impact
	s.log.Error("stripe could not create some events: they were never delivered and are not on /v1/events; see docs/operations.md, \"Stripe could not create events\"",
		"key", ev.Key().String(), "alert_id", d.AlertID, "severity", d.Severity, "resolved_at", d.ResolvedAt,
		"event_type", impact.EventType, "object_type", impact.RelatedObject.Type, "object_id", impact.RelatedObject.ID,
		"account", impact.Context, "summary", logs.RedactEmails(d.Summary))
	s.metrics.Emit(metrics.Dims{Provider: stripe.Name}, metrics.Counted(metrics.StripeEventsNotGenerated, 1))
	return nil
}

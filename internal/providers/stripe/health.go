package stripe

import (
	"encoding/json"

	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// eventGenerationFailureResolved is the type of Stripe's thin event that
// says Stripe could not create some events, which will therefore never
// be delivered nor listed on /v1/events (so the reconciler cannot find
// them either).
const eventGenerationFailureResolved = "v2.core.health.event_generation_failure.resolved"

// alert is the Fetch.Alert of Stripe: eventGenerationFailureResolved is
// logged naming the affected event type and object, and counted in
// StripeEventsNotGenerated, which the template alarms on. What to do is
// in docs/operations.md.
func alert(ev webhook.Event) (provider.Alert, bool) {
	if ev.Type != eventGenerationFailureResolved {
		return provider.Alert{}, false
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
	return provider.Alert{
		Message: "stripe could not create some events: they were never delivered and are not on /v1/events; see docs/operations.md, \"Stripe could not create events\"",
		Attrs: []any{"alert_id", d.AlertID, "severity", d.Severity, "resolved_at", d.ResolvedAt,
			"event_type", impact.EventType, "object_type", impact.RelatedObject.Type, "object_id", impact.RelatedObject.ID,
			"account", impact.Context, "summary", d.Summary},
		Metric: "StripeEventsNotGenerated",
	}, true
}

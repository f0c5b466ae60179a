// Package eventbridge is the handler of the function a Stripe event
// destination on Amazon EventBridge invokes (a partner event source,
// aws.partner/stripe.com/<destination id>; template parameter
// StripeEventBridgeSource; eventbridgefn wires it). It claims each Stripe
// event through the same intake the receiver and the reconciler use: an
// event that arrives both as a webhook and through EventBridge is one
// claim, so its effects run once.
//
// Each EventBridge event carries the Stripe event, snapshot or thin, in
// its detail; the envelope's own id is EventBridge's, not Stripe's, and
// is not used. There is no signature to verify: only Stripe can put
// events on its partner event source, and the template's rule reads that
// source's bus alone.
package eventbridge

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/internal/receiver"
	"github.com/hookinbox/hookinbox/webhook"
)

// Provider is the provider whose events the function claims, and whose
// events its dead-letter queue holds: Stripe.
func Provider() stripe.Provider { return stripe.Provider{} }

// Parse reads the Stripe event of a message of the function's
// dead-letter queue: the EventBridge event's detail.
func Parse(detail []byte) (webhook.Event, error) { return stripe.ParseEvent(detail) }

// The function's dead-letter queue in template.yaml: its logical ID and
// the output with its URL.
const (
	DLQ       = "StripeEventBridgeDLQ"
	DLQOutput = "StripeEventBridgeDLQUrl"
)

// sourcePrefix begins the source of every event from a Stripe event
// destination.
const sourcePrefix = "aws.partner/stripe.com"

// accepter is the intake call the handler makes.
type accepter interface {
	Accept(ctx context.Context, ev webhook.Event) (intake.Outcome, error)
}

// Handler claims the Stripe events of EventBridge invocations. It is safe
// for concurrent use.
type Handler struct {
	intake  accepter
	metrics *metrics.Recorder
	log     *slog.Logger
}

// New returns a Handler on a ready intake; rec records Received,
// Duplicate and VerifyFailed as the receiver does (nil records nothing).
func New(in accepter, rec *metrics.Recorder, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{intake: in, metrics: rec, log: log}
}

// Handle claims the Stripe event in ev's detail as stripe#<id> (a thin
// event with snapshot_event: stripe#<snapshot_event>, as on the webhook
// route). An event that is not from Stripe's partner source or whose
// detail is not a Stripe event is logged with the reason, counted in
// VerifyFailed and dropped: nothing is written and no retry could help.
// An error means the claim or the message may be missing; EventBridge
// invokes again (and after its retries the event is in the rule's
// dead-letter queue).
func (h *Handler) Handle(ctx context.Context, ev events.EventBridgeEvent) error {
	log := h.log.With("eventbridge_id", ev.ID, "detail_type", ev.DetailType)
	if !strings.HasPrefix(ev.Source, sourcePrefix) {
		log.Error("eventbridge event refused: not from a Stripe partner event source", "reason", "unknown-source")
		h.metrics.Emit(metrics.Dims{Provider: stripe.Name, Reason: "unknown-source"}, metrics.Counted(metrics.VerifyFailed, 1))
		return nil
	}
	se, err := stripe.ParseEvent(ev.Detail)
	if err != nil {
		reason := receiver.Reason(err)
		log.Error("eventbridge event refused: its detail is not a Stripe event", "reason", reason, "error", logs.RedactError(err))
		h.metrics.Emit(metrics.Dims{Provider: stripe.Name, Reason: reason}, metrics.Counted(metrics.VerifyFailed, 1))
		return nil
	}
	log = log.With("key", se.Key().String(), "type", se.Type)
	outcome, err := h.intake.Accept(ctx, se)
	if err != nil {
		log.Error("eventbridge event not claimed; EventBridge retries", "reason", err.Error())
		h.metrics.Emit(metrics.Dims{Provider: stripe.Name}, metrics.Counted(metrics.IntakeErrors, 1))
		return fmt.Errorf("claim %s: %w", se.Key(), err)
	}
	d := metrics.Dims{Provider: stripe.Name, EventType: se.Type}
	if outcome == intake.Duplicate {
		h.metrics.Emit(d, metrics.Counted(metrics.Received, 1), metrics.Counted(metrics.Duplicate, 1))
	} else {
		h.metrics.Emit(d, metrics.Counted(metrics.Received, 1))
	}
	log.Info("eventbridge event " + outcome.String())
	return nil
}

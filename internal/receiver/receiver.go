// Package receiver is the webhook front door: it verifies a delivery over
// its raw bytes, claims it once in the inbox, hands it to the events queue
// and answers fast. It does nothing else (DESIGN rule 3).
//
// Guarantees: nothing unverified is written or sent; a claim is made before
// its message is sent, and released again (answering 500 so the provider
// retries) when the send fails; a duplicate is answered 200 without a second
// message, unless its claim has sat in RECEIVED longer than the grace period,
// in which case it is re-enqueued once per grace period. The claim path
// itself is package intake, which the reconciler shares for events it
// fetched from the provider's API. A Handler is safe for concurrent use.
package receiver

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/metrics"
	"github.com/hookinbox/hookinbox/internal/verify"
	"github.com/hookinbox/hookinbox/webhook"
)

// Config tunes a Handler. The zero value of each field means its default.
type Config struct {
	MaxBodyBytes int64 // largest body accepted; default 256 KiB, at most inbox.MaxPayloadBytes
	// Metrics records Received, Duplicate, VerifyFailed and IntakeErrors;
	// nil records nothing.
	Metrics *metrics.Recorder
}

// DefaultMaxBodyBytes is Config.MaxBodyBytes's default.
const DefaultMaxBodyBytes = 256 << 10

func (c Config) withDefaults() Config {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return c
}

// Verifier checks one provider's signature over the raw body and returns
// the event it carries. Header names are lower case, as API Gateway gives them.
type Verifier interface {
	Verify(ctx context.Context, headers map[string]string, body []byte) (webhook.Event, error)
}

// VerifierFunc adapts a function to Verifier.
type VerifierFunc func(ctx context.Context, headers map[string]string, body []byte) (webhook.Event, error)

// Verify calls f.
func (f VerifierFunc) Verify(ctx context.Context, headers map[string]string, body []byte) (webhook.Event, error) {
	return f(ctx, headers, body)
}

// accepter claims and enqueues a verified event; *intake.Intake is the one.
type accepter interface {
	Accept(ctx context.Context, ev webhook.Event) (intake.Outcome, error)
}

// Handler answers API Gateway HTTP API (payload v2) requests on
// POST /webhooks/{provider}.
type Handler struct {
	cfg       Config
	verifiers map[string]Verifier
	intake    accepter
	log       *slog.Logger
}

// New returns a Handler. verifiers maps a provider name ("stripe") to its
// Verifier; in claims what they verify.
func New(cfg Config, verifiers map[string]Verifier, in accepter, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg.withDefaults(), verifiers: verifiers, intake: in, log: log}
}

// Handle answers one delivery. It returns an error only for a response it
// could not build; every failure is an HTTP answer.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	provider := req.PathParameters["provider"]
	// The request id comes with ctx (internal/logs adds it to the line).
	log := h.log.With("provider", provider)
	outcome, ev, err := h.receive(ctx, provider, req)
	h.count(provider, outcome, ev, err)
	if err != nil {
		status, public := statusOf(err)
		attrs := []any{"status", status, "reason", err.Error()}
		if ev.ID != "" {
			attrs = append(attrs, "key", ev.Key().String(), "type", ev.Type)
		}
		if status >= 500 {
			log.ErrorContext(ctx, "webhook not accepted", attrs...)
		} else {
			log.WarnContext(ctx, "webhook rejected", attrs...)
		}
		return errorResponse(status, public), nil
	}
	log.InfoContext(ctx, "webhook "+outcome.String(), "key", ev.Key().String(), "type", ev.Type, "livemode", ev.Livemode)
	return jsonResponse(http.StatusOK, `{"status":"`+outcome.String()+`"}`), nil
}

// count records the delivery's metrics. A provider dimension is written
// only for a registered provider, and an event type only for a verified
// event: an unverified request cannot mint metrics.
func (h *Handler) count(provider string, outcome intake.Outcome, ev webhook.Event, err error) {
	if _, ok := h.verifiers[provider]; !ok {
		provider = ""
	}
	if err == nil {
		d := metrics.Dims{Provider: provider, EventType: ev.Type}
		if outcome == intake.Duplicate {
			h.cfg.Metrics.Emit(d, metrics.Counted(metrics.Received, 1), metrics.Counted(metrics.Duplicate, 1))
		} else {
			h.cfg.Metrics.Emit(d, metrics.Counted(metrics.Received, 1))
		}
		return
	}
	if reason := verify.Reason(err); reason != "" && ev.ID == "" {
		h.cfg.Metrics.Emit(metrics.Dims{Provider: provider, Reason: reason}, metrics.Counted(metrics.VerifyFailed, 1))
		return
	}
	h.cfg.Metrics.Emit(metrics.Dims{Provider: provider, EventType: ev.Type}, metrics.Counted(metrics.IntakeErrors, 1))
}

// receive does the work of Handle: verify, claim, enqueue.
func (h *Handler) receive(ctx context.Context, provider string, req events.APIGatewayV2HTTPRequest) (intake.Outcome, webhook.Event, error) {
	if m := req.RequestContext.HTTP.Method; m != "" && m != http.MethodPost {
		return 0, webhook.Event{}, fmt.Errorf("%w: %s", webhook.ErrMethodNotAllowed, m)
	}
	v, ok := h.verifiers[provider]
	if !ok {
		return 0, webhook.Event{}, fmt.Errorf("%w: %q", webhook.ErrUnknownProvider, provider)
	}
	body, err := h.rawBody(req)
	if err != nil {
		return 0, webhook.Event{}, err
	}
	ev, err := v.Verify(ctx, lowerKeys(req.Headers), body)
	if err != nil {
		return 0, webhook.Event{}, fmt.Errorf("verify: %w", err)
	}
	outcome, err := h.intake.Accept(ctx, ev)
	return outcome, ev, err
}

// rawBody returns the bytes the provider sent, within the size limit.
func (h *Handler) rawBody(req events.APIGatewayV2HTTPRequest) ([]byte, error) {
	max := h.cfg.MaxBodyBytes
	if !req.IsBase64Encoded {
		if int64(len(req.Body)) > max {
			return nil, fmt.Errorf("%w: %d bytes, limit %d", webhook.ErrTooLarge, len(req.Body), max)
		}
		return []byte(req.Body), nil
	}
	if int64(base64.StdEncoding.DecodedLen(len(req.Body))) > max+2 {
		return nil, fmt.Errorf("%w: about %d bytes, limit %d", webhook.ErrTooLarge, base64.StdEncoding.DecodedLen(len(req.Body)), max)
	}
	body, err := base64.StdEncoding.DecodeString(req.Body)
	if err != nil {
		return nil, fmt.Errorf("%w: body flagged base64 but not base64: %v", webhook.ErrMalformed, err)
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", webhook.ErrTooLarge, len(body), max)
	}
	return body, nil
}

func lowerKeys(h map[string]string) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = v
	}
	return out
}

// stripeVerifier is the part of verify.Stripe the receiver uses.
type stripeVerifier interface {
	Verify(signatureHeader string, body []byte) (webhook.Event, error)
}

// StripeVerifier adapts a Stripe verifier to the Stripe-Signature header.
func StripeVerifier(s stripeVerifier) Verifier {
	return VerifierFunc(func(_ context.Context, headers map[string]string, body []byte) (webhook.Event, error) {
		return s.Verify(headers["stripe-signature"], body)
	})
}

// rotatingStripeVerifier is the part of verify.RotatingStripe the receiver uses.
type rotatingStripeVerifier interface {
	Verify(ctx context.Context, signatureHeader string, body []byte) (webhook.Event, error)
}

// RotatingStripeVerifier adapts a Stripe verifier whose secrets are
// reloaded on a mismatch to the Stripe-Signature header.
func RotatingStripeVerifier(s rotatingStripeVerifier) Verifier {
	return VerifierFunc(func(ctx context.Context, headers map[string]string, body []byte) (webhook.Event, error) {
		return s.Verify(ctx, headers["stripe-signature"], body)
	})
}

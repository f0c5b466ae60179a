// Package receiver is the webhook front door: it verifies a delivery over
// its raw bytes, claims it once in the inbox, hands it to the events queue
// and answers fast. It does nothing else: the business runs in the
// processor, so a provider waits only for the claim and the send.
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
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// Config tunes a Handler. The zero value of each field means its default.
type Config struct {
	MaxBodyBytes int64 // largest body accepted; default DefaultMaxBodyBytes, the most Lambda can receive
	// Metrics records Received, Duplicate, VerifyFailed and IntakeErrors;
	// nil records nothing.
	Metrics *metrics.Recorder
	// LogInMetrics says Metrics writes to the log's stream (Lambda's
	// stdout): the INFO line of a delivery of one event then rides in its
	// metrics line instead of a line of its own.
	LogInMetrics bool
}

// The largest body Lambda can receive from an HTTP API request. A
// synchronous invocation takes an event of at most lambdaPayloadLimit
// bytes; the payload v2 event carries the body beside eventEnvelopeBytes
// at most of everything else. API Gateway limits the request line and
// headers to 10,240 bytes, and the event holds them at most three times
// (headers and cookies, rawPath and http.path, rawQueryString and
// queryStringParameters), with about 2 KiB of requestContext: 32 KiB
// covers it. A text body (JSON, form) rides as it is, so the largest is
// DefaultMaxBodyBytes; a binary one is base64-encoded, so it is at most
// 3/4 of that (4,694,016 bytes) and never reaches the receiver larger.
const (
	lambdaPayloadLimit  = 6 << 20  // 6,291,456 bytes
	eventEnvelopeBytes  = 32 << 10 // 32,768 bytes
	DefaultMaxBodyBytes = lambdaPayloadLimit - eventEnvelopeBytes
)

func (c Config) withDefaults() Config {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return c
}

// verifier authenticates one provider's deliveries and returns the events
// a delivery carries: one, or several (an Adyen batch). Header names in the
// request are lower case, as API Gateway gives them. Every
// provider.Verifier is one.
type verifier interface {
	Verify(ctx context.Context, r webhook.Request) ([]webhook.Event, error)
}

// Provider is what the receiver knows of one provider: data, never a
// branch on its name, so adding a provider changes no receiver code.
type Provider struct {
	Verifier verifier
	// Webhook says how the provider delivers: its HTTP method, and the
	// text answered once every event of a delivery is claimed.
	Webhook provider.Webhook
}

// accepter claims and enqueues a verified event; *intake.Intake is the one.
type accepter interface {
	Accept(ctx context.Context, ev webhook.Event) (intake.Outcome, error)
}

// Handler answers API Gateway HTTP API (payload v2) requests on
// /webhooks/{provider}.
type Handler struct {
	cfg       Config
	providers map[string]Provider
	intake    accepter
	log       *slog.Logger
}

// New returns a Handler. providers maps each enabled provider's name
// ("stripe") to what it needs, and any other {provider} answers 404; in
// claims what they verify.
func New(cfg Config, providers map[string]Provider, in accepter, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg.withDefaults(), providers: providers, intake: in, log: log}
}

// Handle answers one delivery. It returns an error only for a response it
// could not build; every failure is an HTTP answer.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	name := providerName(req)
	// The delivery's metrics (the receiver's and the intake's) wait in a
	// batch and leave as one line per set of dimensions when it is
	// answered: for a webhook, one line, which can carry its log fields
	// too (LogInMetrics).
	var batch *metrics.Batch
	if h.cfg.Metrics != nil {
		ctx, batch = metrics.WithBatch(ctx)
	}
	p, known := h.providers[name]
	outcome, evs, err := h.receive(ctx, p, known, name, req)
	h.count(ctx, name, known, outcome, evs, err)
	if err != nil {
		defer h.cfg.Metrics.Flush(batch)
		return h.refused(ctx, name, p, evs, err), nil
	}
	h.logAccepted(ctx, batch, name, outcome, evs)
	return acceptedResponse(p, outcome), nil
}

// providerName returns the {provider} of the request's path: its path
// parameter, or for a route with a fixed path (GET /webhooks/gopay) its
// last segment.
func providerName(req events.APIGatewayV2HTTPRequest) string {
	if name := req.PathParameters["provider"]; name != "" {
		return name
	}
	return path.Base(req.RequestContext.HTTP.Path)
}

// logger returns the receiver's logger with the provider, made only for
// a line of its own (the request id comes with ctx: internal/platform/logs
// adds it to the line).
func (h *Handler) logger(name string) *slog.Logger { return h.log.With("provider", name) }

// refused logs a delivery answered with an error (err) and returns its
// answer (statusOf).
func (h *Handler) refused(ctx context.Context, name string, p Provider, evs []webhook.Event, err error) events.APIGatewayV2HTTPResponse {
	status, public := statusOf(err)
	attrs := []any{"status", status, "reason", err.Error()}
	if len(evs) > 0 {
		attrs = append(attrs, "key", evs[0].Key().String(), "type", evs[0].Type, "events", len(evs))
	}
	if status >= 500 {
		h.logger(name).ErrorContext(ctx, "webhook not accepted", attrs...)
	} else {
		h.logger(name).WarnContext(ctx, "webhook rejected", attrs...)
	}
	resp := errorResponse(status, public)
	if status == http.StatusMethodNotAllowed {
		resp.Headers["allow"] = p.Webhook.HTTPMethod()
	}
	return resp
}

// logAccepted logs each event of an accepted delivery and flushes its
// metrics: a delivery of one event usually logs in its metrics line
// (LogInMetrics).
func (h *Handler) logAccepted(ctx context.Context, batch *metrics.Batch, name string, outcome map[webhook.Key]intake.Outcome, evs []webhook.Event) {
	if batch != nil && h.cfg.LogInMetrics && len(evs) == 1 {
		var fields []metrics.Field
		if h.log.Enabled(ctx, slog.LevelInfo) {
			fields = logFields(ctx, name, evs[0], outcome[evs[0].Key()])
		}
		h.cfg.Metrics.Flush(batch, fields...)
		return
	}
	log := h.logger(name)
	for _, ev := range evs {
		log.InfoContext(ctx, "webhook "+outcome[ev.Key()].String(), "key", ev.Key().String(), "type", ev.Type, "livemode", ev.Livemode)
	}
	h.cfg.Metrics.Flush(batch)
}

// acceptedResponse is the answer to a delivery whose events are all
// claimed: the provider's own text (Webhook.Accepted), or JSON saying
// "accepted" when one event was new and "duplicate" otherwise.
func acceptedResponse(p Provider, outcome map[webhook.Key]intake.Outcome) events.APIGatewayV2HTTPResponse {
	if p.Webhook.Accepted != "" {
		return events.APIGatewayV2HTTPResponse{
			StatusCode: http.StatusOK,
			Headers:    map[string]string{"content-type": "text/plain"},
			Body:       p.Webhook.Accepted,
		}
	}
	answer := intake.Duplicate
	for _, o := range outcome {
		if o == intake.Accepted {
			answer = intake.Accepted
		}
	}
	return jsonResponse(http.StatusOK, `{"status":"`+answer.String()+`"}`)
}

// logFields are the members of the INFO line the logger would write for
// an accepted event (internal/platform/logs: level, message, request id,
// provider, key, type, livemode; email addresses scrubbed), for its
// metrics line to carry instead.
func logFields(ctx context.Context, provider string, ev webhook.Event, o intake.Outcome) []metrics.Field {
	fields := make([]metrics.Field, 0, 7)
	fields = append(fields, metrics.String("level", slog.LevelInfo.String()), metrics.String("msg", "webhook "+o.String()))
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		fields = append(fields, metrics.String(logs.RequestID, lc.AwsRequestID))
	}
	return append(fields, metrics.String(logs.Provider, provider),
		metrics.String(logs.Key, logs.RedactEmails(ev.Key().String())), metrics.String("type", logs.RedactEmails(ev.Type)),
		metrics.Bool("livemode", ev.Livemode))
}

// count records the delivery's metrics, per event. A provider dimension
// is written only for a registered provider, and an event type only for a
// verified event: an unverified request cannot mint metrics.
func (h *Handler) count(ctx context.Context, name string, known bool, outcome map[webhook.Key]intake.Outcome, evs []webhook.Event, err error) {
	if !known {
		name = ""
	}
	if err == nil {
		for _, ev := range evs {
			d := metrics.Dims{Provider: name, EventType: ev.Type}
			if outcome[ev.Key()] == intake.Duplicate {
				h.cfg.Metrics.EmitContext(ctx, d, metrics.Counted(metrics.Received, 1), metrics.Counted(metrics.Duplicate, 1))
			} else {
				h.cfg.Metrics.EmitContext(ctx, d, metrics.Counted(metrics.Received, 1))
			}
		}
		return
	}
	if reason := Reason(err); reason != "" && len(evs) == 0 {
		h.cfg.Metrics.EmitContext(ctx, metrics.Dims{Provider: name, Reason: reason}, metrics.Counted(metrics.VerifyFailed, 1))
		return
	}
	d := metrics.Dims{Provider: name}
	if len(evs) > 0 {
		d.EventType = evs[0].Type
	}
	if errors.Is(err, webhook.ErrBusy) {
		// Not a failure: the provider delivers it again, as asked.
		h.cfg.Metrics.EmitContext(ctx, d, metrics.Counted(metrics.Received, 1), metrics.Counted(metrics.Busy, 1))
		return
	}
	h.cfg.Metrics.EmitContext(ctx, d, metrics.Counted(metrics.IntakeErrors, 1))
}

// receive does the work of Handle: verify, then claim and enqueue every
// event the delivery carries. Nothing is claimed unless all of them
// verified (a batch with one forged item is refused whole).
func (h *Handler) receive(ctx context.Context, p Provider, known bool, name string, req events.APIGatewayV2HTTPRequest) (map[webhook.Key]intake.Outcome, []webhook.Event, error) {
	if !known {
		return nil, nil, fmt.Errorf("%w: %q", errUnknownProvider, name)
	}
	if m := req.RequestContext.HTTP.Method; m != "" && m != p.Webhook.HTTPMethod() {
		return nil, nil, fmt.Errorf("%w: %s", errMethodNotAllowed, m)
	}
	body, err := h.rawBody(req)
	if err != nil {
		return nil, nil, err
	}
	evs, err := p.Verifier.Verify(ctx, webhook.Request{
		Method: req.RequestContext.HTTP.Method,
		Header: lowerKeys(req.Headers),
		Query:  req.QueryStringParameters,
		Body:   body,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("verify: %w", err)
	}
	if len(evs) == 0 {
		return nil, nil, fmt.Errorf("verify: %w: the delivery carries no event", webhook.ErrMalformed)
	}
	outcome := make(map[webhook.Key]intake.Outcome, len(evs))
	for _, ev := range evs {
		o, err := h.intake.Accept(ctx, ev)
		if err != nil {
			return nil, evs, err
		}
		outcome[ev.Key()] = o
	}
	return outcome, evs, nil
}

// rawBody returns the bytes the provider sent, within the size limit.
func (h *Handler) rawBody(req events.APIGatewayV2HTTPRequest) ([]byte, error) {
	max := h.cfg.MaxBodyBytes
	if !req.IsBase64Encoded {
		if int64(len(req.Body)) > max {
			return nil, fmt.Errorf("%w: %d bytes, limit %d", errTooLarge, len(req.Body), max)
		}
		return []byte(req.Body), nil
	}
	if int64(base64.StdEncoding.DecodedLen(len(req.Body))) > max+2 {
		return nil, fmt.Errorf("%w: about %d bytes, limit %d", errTooLarge, base64.StdEncoding.DecodedLen(len(req.Body)), max)
	}
	body, err := base64.StdEncoding.DecodeString(req.Body)
	if err != nil {
		return nil, fmt.Errorf("%w: body flagged base64 but not base64: %v", webhook.ErrMalformed, err)
	}
	if int64(len(body)) > max {
		return nil, fmt.Errorf("%w: %d bytes, limit %d", errTooLarge, len(body), max)
	}
	return body, nil
}

// lowerKeys returns h with its names in lower case: h itself when they
// already are, as API Gateway's HTTP API (payload v2) gives them, and a
// lowered copy otherwise (another caller, a test); h is never changed.
func lowerKeys(h map[string]string) map[string]string {
	for k := range h {
		if !isLower(k) {
			out := make(map[string]string, len(h))
			for k, v := range h {
				out[strings.ToLower(k)] = v
			}
			return out
		}
	}
	return h
}

// isLower reports that strings.ToLower(s) == s for certain: s has no
// upper-case ASCII letter and no byte outside ASCII.
func isLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return false
		}
	}
	return true
}

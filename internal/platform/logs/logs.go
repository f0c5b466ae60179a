// Package logs builds the functions' structured logger: one JSON object
// per line, at the level Lambda's LoggingConfig sets, with the invocation's
// request id on every line logged with its context, and every email
// address scrubbed from the message and from every string, error and
// Stringer value before the line is written, at every level. Handlers
// name events by key, provider and type and never log payloads; the
// scrubber is the net under that rule for text from outside systems (an
// SES error names the recipient it refused).
//
// A Handler is safe for concurrent use.
package logs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// New returns a JSON logger writing to w at level.
func New(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(Wrap(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})))
}

// Wrap returns h with request ids added and email addresses scrubbed.
func Wrap(h slog.Handler) slog.Handler { return handler{next: h} }

// Level returns the level Lambda asks for in AWS_LAMBDA_LOG_LEVEL (set
// from the function's LoggingConfig.ApplicationLogLevel): TRACE and DEBUG
// are slog's Debug, then INFO, WARN, ERROR and FATAL (Error). Unset or
// unknown is Info.
func Level(getenv func(string) string) slog.Level {
	switch strings.ToUpper(getenv("AWS_LAMBDA_LOG_LEVEL")) {
	case "TRACE", "DEBUG":
		return slog.LevelDebug
	case "WARN":
		return slog.LevelWarn
	case "ERROR", "FATAL":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// Keys the handler adds: the invocation's request id on every line logged
// with its context, and the provider of every line that names an event
// by Key ("<provider>#<event id>") but not its provider.
const (
	RequestID = "request_id"
	Key       = "key"
	Provider  = "provider"
)

type handler struct {
	next        slog.Handler
	hasProvider bool // a provider (or a key, which added one) is among the With attrs
}

// provider returns the provider part of a key attribute's value.
func provider(a slog.Attr) (string, bool) {
	if a.Key != Key || a.Value.Kind() != slog.KindString {
		return "", false
	}
	p, _, ok := strings.Cut(a.Value.String(), "#")
	return p, ok && p != ""
}

func (h handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, RedactEmails(r.Message), r.PC)
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		out.AddAttrs(slog.String(RequestID, lc.AwsRequestID))
	}
	hasProvider, derived := h.hasProvider, ""
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(scrub(a))
		if a.Key == Provider {
			hasProvider = true
		} else if p, ok := provider(a); ok {
			derived = p
		}
		return true
	})
	if !hasProvider && derived != "" {
		out.AddAttrs(slog.String(Provider, derived))
	}
	return h.next.Handle(ctx, out)
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, 0, len(as)+1)
	hasProvider, derived := h.hasProvider, ""
	for _, a := range as {
		clean = append(clean, scrub(a))
		if a.Key == Provider {
			hasProvider = true
		} else if p, ok := provider(a); ok {
			derived = p
		}
	}
	if !hasProvider && derived != "" {
		clean = append(clean, slog.String(Provider, derived))
		hasProvider = true
	}
	return handler{next: h.next.WithAttrs(clean), hasProvider: hasProvider}
}

func (h handler) WithGroup(name string) slog.Handler {
	return handler{next: h.next.WithGroup(name), hasProvider: h.hasProvider}
}

// scrub returns a with email addresses replaced in its text.
func scrub(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, RedactEmails(v.String()))
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, ga := range g {
			clean[i] = scrub(ga)
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, RedactError(x))
		case fmt.Stringer:
			return slog.String(a.Key, RedactEmails(x.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

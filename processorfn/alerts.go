package processorfn

import (
	"context"
	"log/slog"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// alerts tells the operator about the events meant for them
// (provider.Fetch.Alert), by provider, before the business sees any
// event: an error log line, every email address in its text attributes
// scrubbed, and the alert's metric. Such an event then ends DONE; every
// other one goes to next.
type alerts struct {
	next    Business
	alert   map[string]func(webhook.Event) (provider.Alert, bool)
	metrics *metrics.Recorder
	log     *slog.Logger
}

func (a alerts) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	alert, ok := a.alert[ev.Provider]
	if !ok {
		return a.next.Handle(ctx, ev, fx)
	}
	al, ok := alert(ev)
	if !ok {
		return a.next.Handle(ctx, ev, fx)
	}
	attrs := append([]any{"key", ev.Key().String()}, al.Attrs...)
	for i, v := range attrs {
		if s, ok := v.(string); ok {
			attrs[i] = logs.RedactEmails(s)
		}
	}
	a.log.Error(al.Message, attrs...)
	a.metrics.Emit(metrics.Dims{Provider: ev.Provider}, metrics.Counted(al.Metric, 1))
	return nil
}

// liveModes returns the mode the deployment runs, by provider, for the
// providers whose mode is set (processor.Config.Live): each its own.
func liveModes(fetch map[string]provider.Fetch) map[string]bool {
	live := map[string]bool{}
	for name, f := range fetch {
		if f.Mode != provider.ModeUnchecked {
			live[name] = f.Mode == provider.ModeLive
		}
	}
	return live
}

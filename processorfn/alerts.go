package processorfn

import (
	"context"
	"log/slog"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// alerts tells the operator about the events meant for them
// (provider.Fetch.Alert), by provider, before the business sees any
// event: an error log line and the alert's metric. Such an event then
// ends DONE; every other one goes to next.
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
	a.log.Error(al.Message, append([]any{"key", ev.Key().String()}, al.Attrs...)...)
	a.metrics.Emit(metrics.Dims{Provider: ev.Provider}, metrics.Counted(al.Metric, 1))
	return nil
}

// liveModes returns the mode the deployment runs, by provider, for the
// providers whose events say theirs (processor.Config.Live): a provider's
// own, or for provider.ModeDeployment that of the first provider in names
// whose mode is set; with none set, such a provider is not checked.
func liveModes(names []string, fetch map[string]provider.Fetch) map[string]bool {
	live := map[string]bool{}
	deployment, set := false, false
	for _, name := range names {
		switch fetch[name].Mode {
		case provider.ModeLive, provider.ModeTest:
			live[name] = fetch[name].Mode == provider.ModeLive
			if !set {
				deployment, set = live[name], true
			}
		}
	}
	for _, name := range names {
		if fetch[name].Mode == provider.ModeDeployment && set {
			live[name] = deployment
		}
	}
	return live
}

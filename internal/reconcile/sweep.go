package reconcile

import (
	"context"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/internal/platform/logs"
	"github.com/hookinbox/hookinbox/webhook"
)

// sweeps runs each source that sweeps (provider.Sweeper), whatever the
// others did, adds what it did to s and returns its errors. A sweep's
// notes and errors may quote its provider's answers: their email
// addresses are scrubbed.
func (h *Handler) sweeps(ctx context.Context, now time.Time, s *Summary) []error {
	accept := func(ctx context.Context, ev webhook.Event) error { _, err := h.intake.Accept(ctx, ev); return err }
	var errs []error
	for _, src := range h.sources {
		if src.Sweep == nil {
			continue
		}
		sw, err := src.Sweep.Sweep(ctx, now, accept, func() bool { return h.late(ctx) })
		s.Listed += sw.Fetched
		s.Missed += sw.Missed
		s.Skipped += sw.Skipped
		for _, l := range sw.Events {
			l.Note = logs.RedactEmails(l.Note)
			s.Events = append(s.Events, l)
		}
		pr := ProviderRun{Provider: src.Provider, Listed: sw.Fetched, Missed: sw.Missed, Skipped: sw.Skipped, Checkpoint: sw.Since}
		if err != nil {
			pr.Errors = 1
			errs = append(errs, fmt.Errorf("%s: %s", src.Provider, logs.RedactError(err)))
		}
		s.Providers = append(s.Providers, pr)
	}
	return errs
}

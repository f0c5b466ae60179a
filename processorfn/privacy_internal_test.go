package processorfn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/privacy"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// requestAll reads every event as a privacy request.
func requestAll(webhook.Event) (provider.PrivacyRequest, bool, error) {
	return provider.PrivacyRequest{Erase: true, Subjects: []provider.Subject{"jenny@example.com"}}, true, nil
}

// TestNoSubjectKeyWaitsForTheOtherParts: a privacy request on a stack
// without a subject key is a permanent failure like any other: it parks
// the event only once the business and the destinations are done, and
// holds back while one of them is still to run.
func TestNoSubjectKeyWaitsForTheOtherParts(t *testing.T) {
	retry := errors.New("destination crm: 503 Service Unavailable")
	busy := fmt.Errorf("destination crm: not tried: %w", webhook.ErrBusy)
	tests := []struct {
		name            string
		next            error
		permanent, busy bool
	}{
		{name: "the others done: parked", permanent: true},
		{name: "the others ignore it: parked", next: webhook.ErrNoHandler, permanent: true},
		{name: "a destination refused too: parked", next: webhook.Permanent(errors.New("destination crm: 400")), permanent: true},
		{name: "a destination retries: held", next: retry},
		{name: "a destination busy: held, the attempt uncounted", next: busy, busy: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := privacyRequests{
				next:       businessFunc(func(context.Context, webhook.Event, effects.Runner) error { return tt.next }),
				requesters: map[string]func(webhook.Event) (provider.PrivacyRequest, bool, error){"shopify": requestAll},
				log:        slog.New(slog.DiscardHandler),
			}
			err := p.Handle(context.Background(), webhook.Event{Provider: "shopify", ID: "1", Type: "customers/redact"}, nil)
			if webhook.IsPermanent(err) != tt.permanent || errors.Is(err, webhook.ErrBusy) != tt.busy {
				t.Errorf("Handle = %v: permanent %v, busy %v; want %v, %v", err, webhook.IsPermanent(err), errors.Is(err, webhook.ErrBusy), tt.permanent, tt.busy)
			}
			if err == nil || !strings.Contains(err.Error(), privacy.ErrNoKey.Error()) {
				t.Errorf("Handle = %v; want it to say %q", err, privacy.ErrNoKey)
			}
		})
	}
}

// Package crm is an example business for hookinbox, kept in its own module
// the way a team keeps theirs: on a completed Stripe checkout it tells a
// CRM about the new customer, once, through hookinbox's effect ledger.
//
// Guarantees: the CRM gets one request per checkout event however often
// Stripe delivers it (the ledger records the effect; the request carries
// an Idempotency-Key derived from the event, for the window between the
// CRM answering and the record being written). A CRM that is down (5xx,
// 429, no answer) is retried with backoff by hookinbox; a CRM that refuses
// the request (another 4xx) parks the event in the DLQ with the reason.
// A Business is safe for concurrent use.
package crm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stripe/stripe-go/v76"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/stripeevent"
	"github.com/hookinbox/hookinbox/webhook"
)

// EffectNotify is the ledger name of the CRM call. Never rename an
// effect: a new name runs again on replay.
const EffectNotify = "crm-notify"

// Business sends new customers to the CRM at URL.
type Business struct {
	URL    string
	Client *http.Client
}

// FromEnv builds the Business from CRM_URL; it is a
// processorfn.BusinessBuilder.
func FromEnv(_ context.Context, _ aws.Config, getenv func(string) string) (processorfn.Business, error) {
	url := getenv("CRM_URL")
	if url == "" {
		return nil, fmt.Errorf("crm: CRM_URL is required (the CRM's contacts endpoint)")
	}
	return &Business{URL: url, Client: &http.Client{Timeout: 10 * time.Second}}, nil
}

// Handle runs the effects of one verified event.
func (b *Business) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	if ev.Provider != "stripe" || ev.Type != "checkout.session.completed" {
		return fmt.Errorf("%s %s: %w", ev.Provider, ev.Type, webhook.ErrNoHandler)
	}
	cs, err := stripeevent.Object[stripe.CheckoutSession](ev)
	if err != nil {
		return err
	}
	contact := Contact{Session: cs.ID, Event: string(ev.Key())}
	if cs.Customer != nil {
		contact.Customer = cs.Customer.ID
	}
	if cs.CustomerDetails != nil {
		contact.Email = cs.CustomerDetails.Email
	}
	return effects.DoResult(ctx, fx, EffectNotify, func(ctx context.Context, idempotencyKey string) (string, error) {
		return b.notify(ctx, contact, idempotencyKey)
	})
}

// Contact is what the CRM receives.
type Contact struct {
	Customer string `json:"customer,omitempty"`
	Email    string `json:"email,omitempty"`
	Session  string `json:"checkout_session"`
	Event    string `json:"hookinbox_event"`
}

// notify POSTs the contact and returns the CRM's contact ID.
func (b *Business) notify(ctx context.Context, c Contact, idempotencyKey string) (string, error) {
	body, _ := json.Marshal(c)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.URL, bytes.NewReader(body))
	if err != nil {
		return "", webhook.Permanent(fmt.Errorf("crm request: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idempotencyKey)
	resp, err := b.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("crm: %w", err) // transient: retried
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		var out struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(raw, &out)
		return out.ID, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return "", fmt.Errorf("crm answered %s", resp.Status)
	default:
		return "", webhook.Permanent(fmt.Errorf("crm refused the contact: %s", resp.Status))
	}
}

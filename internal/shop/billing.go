package shop

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/invoice"

	"github.com/hookinbox/hookinbox/internal/webhook"
)

// Billing creates invoices. Implementations mark errors that no retry can
// fix with webhook.Permanent.
type Billing interface {
	// CreateInvoice creates the invoice, at most once per
	// req.IdempotencyKey, and returns its ID.
	CreateInvoice(ctx context.Context, req InvoiceRequest) (invoiceID string, err error)
}

// InvoiceRequest is an invoice to create.
type InvoiceRequest struct {
	Customer       string            // Stripe customer ID, "cus_..."
	Description    string            // shown on the invoice
	Metadata       map[string]string // stored on the invoice
	IdempotencyKey string            // sent as Stripe's Idempotency-Key header
}

// NewStripeBilling returns Billing through the Stripe API at apiURL (Stripe's
// own when empty; stripe-mock or a test server otherwise) with apiKey, over
// httpClient (stripe-go's default when nil). The client makes no retries of
// its own and logs nothing: retries go through the queue, and errors are
// returned. Invoices are created as drafts (auto_advance false): the
// checkout already took the payment, so Stripe must not finalize and charge
// them.
func NewStripeBilling(apiKey, apiURL string, httpClient *http.Client) Billing {
	cfg := &stripe.BackendConfig{
		HTTPClient:        httpClient,
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
		MaxNetworkRetries: stripe.Int64(0),
		EnableTelemetry:   stripe.Bool(false),
	}
	if apiURL != "" {
		cfg.URL = stripe.String(apiURL)
	}
	// invoice.Client, not client.New: the full API client links every
	// one of stripe-go's ~150 resource packages into the processor.
	return &stripeBilling{invoices: invoice.Client{B: stripe.GetBackendWithConfig(stripe.APIBackend, cfg), Key: apiKey}}
}

type stripeBilling struct{ invoices invoice.Client }

func (b *stripeBilling) CreateInvoice(ctx context.Context, req InvoiceRequest) (string, error) {
	params := &stripe.InvoiceParams{
		Customer:    stripe.String(req.Customer),
		Description: stripe.String(req.Description),
		AutoAdvance: stripe.Bool(false),
	}
	params.Context = ctx
	for k, v := range req.Metadata {
		params.AddMetadata(k, v)
	}
	params.SetIdempotencyKey(req.IdempotencyKey)
	inv, err := b.invoices.New(params)
	if err != nil {
		return "", fmt.Errorf("create invoice: %w", classifyStripe(err))
	}
	if inv.ID == "" {
		return "", errors.New("create invoice: Stripe answered without an invoice id")
	}
	return inv.ID, nil
}

// classifyStripe marks Stripe's 4xx answers permanent (a bad request, an
// unknown customer, a wrong key: retrying sends the same request), except
// 409 (a concurrent request with the same idempotency key) and 429 (rate
// limited). 5xx answers and network errors stay transient.
func classifyStripe(err error) error {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return err
	}
	switch code := se.HTTPStatusCode; {
	case code == http.StatusConflict, code == http.StatusTooManyRequests:
		return err
	case code >= 400 && code < 500:
		return webhook.Permanent(err)
	}
	return err
}

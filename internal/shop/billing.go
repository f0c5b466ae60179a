package shop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/stripe/stripe-go/v76"
	"github.com/stripe/stripe-go/v76/invoice"
	stripesub "github.com/stripe/stripe-go/v76/subscription"

	"github.com/hookinbox/hookinbox/internal/shop/stripeapi"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// biller is the shop's view of Stripe Billing: it creates invoices and
// reads subscriptions. Implementations mark errors that no retry can fix
// with webhook.Permanent.
type biller interface {
	// CreateInvoice creates the invoice for req.Key, at most once, and
	// returns its ID: an invoice that already carries req.Key is returned
	// instead of a second one.
	CreateInvoice(ctx context.Context, req invoiceRequest) (invoiceID string, err error)
	// Subscription returns the subscription's current state.
	Subscription(ctx context.Context, id string) (subscriptionState, error)
}

// subscriptionState is a subscription as Stripe holds it now.
type subscriptionState struct {
	ID       string // "sub_..."
	Customer string // "cus_..."
	Status   string // Stripe's status: active, past_due, canceled, ...
}

// metadataEvent is the invoice metadata key that names what an invoice
// was created for (invoiceRequest.Key: the shop's checkout session,
// "stripe-checkout#cs_..."). It is the invoice's identity beyond the 24
// hours Stripe keeps an Idempotency-Key.
const metadataEvent = "hookinbox_event"

// invoiceRequest is an invoice to create.
type invoiceRequest struct {
	Customer       string            // Stripe customer ID, "cus_..."
	Description    string            // shown on the invoice
	Key            webhook.Key       // what the invoice is for (a checkout session); stored as metadata[hookinbox_event]; one invoice per key
	Since          time.Time         // the invoice cannot be older (the event's creation); zero: no bound
	Metadata       map[string]string // more metadata stored on the invoice
	IdempotencyKey string            // sent as Stripe's Idempotency-Key header
}

// newStripeBilling returns a biller through the Stripe API at apiURL
// (Stripe's when empty) over httpClient (stripe-go's default when nil),
// reading the key from keys on every call. A refused key is refreshed and
// the call made once more (stripeapi.WithKey); a refusal that remains is
// transient, so the event is retried, not parked, while a key rolls. It
// neither retries nor logs on its own. Invoices are drafts (auto_advance
// false): the checkout already took the payment.
func newStripeBilling(keys provider.Secret, apiURL string, httpClient *http.Client) biller {
	return &stripeBilling{backend: stripeapi.NewBackend(apiURL, httpClient, 0), keys: keys}
}

type stripeBilling struct {
	backend stripe.Backend
	keys    provider.Secret
}

// CreateInvoice first looks for an invoice of req.Customer, created since
// req.Since, whose metadata names req.Key, and returns it when there is
// one; otherwise it creates the invoice with req.IdempotencyKey. The
// Idempotency-Key alone covers 24 hours (Stripe forgets keys after that); the
// lookup covers a replay days later. It uses the list API, not search:
// Stripe's search index lags writes by up to a minute (an hour during
// incidents) and is not offered in every country, while the list is
// read-after-write consistent, and the customer and the created bound keep
// it to a page or two.
func (b *stripeBilling) CreateInvoice(ctx context.Context, req invoiceRequest) (string, error) {
	if req.Key == "" {
		return "", webhook.Permanent(errors.New("create invoice: no key to tie it to"))
	}
	var id string
	err := stripeapi.WithKey(ctx, b.keys, func(key string) error {
		var err error
		if id, err = b.findInvoice(ctx, key, req); err != nil || id != "" {
			return err
		}
		id, err = b.newInvoice(ctx, key, req)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("create invoice: %w", classifyStripe(err))
	}
	return id, nil
}

// findInvoice returns the ID of req.Customer's invoice created since
// req.Since for req.Key, or "".
func (b *stripeBilling) findInvoice(ctx context.Context, key string, req invoiceRequest) (string, error) {
	params := &stripe.InvoiceListParams{Customer: stripe.String(req.Customer)}
	if !req.Since.IsZero() {
		params.CreatedRange = &stripe.RangeQueryParams{GreaterThanOrEqual: req.Since.Unix()}
	}
	params.Limit = stripe.Int64(100)
	params.Context = ctx
	it := (&invoice.Client{B: b.backend, Key: key}).List(params)
	for it.Next() {
		if inv := it.Invoice(); inv.Metadata[metadataEvent] == string(req.Key) {
			return inv.ID, nil
		}
	}
	if err := it.Err(); err != nil {
		return "", fmt.Errorf("look for an invoice of %s: %w", req.Key, err)
	}
	return "", nil
}

func (b *stripeBilling) newInvoice(ctx context.Context, key string, req invoiceRequest) (string, error) {
	params := &stripe.InvoiceParams{
		Customer:    stripe.String(req.Customer),
		Description: stripe.String(req.Description),
		AutoAdvance: stripe.Bool(false),
	}
	params.Context = ctx
	for k, v := range req.Metadata {
		params.AddMetadata(k, v)
	}
	params.AddMetadata(metadataEvent, string(req.Key))
	params.SetIdempotencyKey(req.IdempotencyKey)
	inv, err := (&invoice.Client{B: b.backend, Key: key}).New(params)
	if err != nil {
		return "", err
	}
	if inv.ID == "" {
		return "", errors.New("the Stripe API answered without an invoice id")
	}
	return inv.ID, nil
}

// Subscription reads GET /v1/subscriptions/{id}. Stripe keeps canceled
// subscriptions, so a 404 means the key cannot see it (another account or
// mode): permanent.
func (b *stripeBilling) Subscription(ctx context.Context, id string) (subscriptionState, error) {
	var sub *stripe.Subscription
	err := stripeapi.WithKey(ctx, b.keys, func(key string) error {
		params := &stripe.SubscriptionParams{}
		params.Context = ctx
		var err error
		sub, err = (&stripesub.Client{B: b.backend, Key: key}).Get(id, params)
		return err
	})
	if err != nil {
		return subscriptionState{}, fmt.Errorf("get subscription %s: %w", id, classifyStripe(err))
	}
	st := subscriptionState{ID: sub.ID, Status: string(sub.Status)}
	if sub.Customer != nil {
		st.Customer = sub.Customer.ID
	}
	if st.ID != id || st.Status == "" {
		return subscriptionState{}, fmt.Errorf("get subscription %s: the API answered %q with status %q", id, st.ID, st.Status)
	}
	return st, nil
}

// classifyStripe marks Stripe's 4xx answers permanent (a bad request, an
// unknown customer: retrying sends the same request), except 401 and 403
// (the key: a person rolls or fixes it in Secrets Manager and the retry
// picks it up), 409 (a concurrent request with the same idempotency key)
// and 429 (rate limited). 5xx answers and network errors stay transient.
func classifyStripe(err error) error {
	switch code := stripeapi.StatusCode(err); {
	case code == http.StatusUnauthorized, code == http.StatusForbidden,
		code == http.StatusConflict, code == http.StatusTooManyRequests:
		return err
	case code >= 400 && code < 500:
		return webhook.Permanent(err)
	}
	return err
}

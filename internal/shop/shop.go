package shop

import (
	"context"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/internal/providers/adyen"
	"github.com/hookinbox/hookinbox/internal/providers/gopay"
	"github.com/hookinbox/hookinbox/internal/providers/shopify"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/providers/mollie"
	"github.com/hookinbox/hookinbox/internal/providers/paddle"
	"github.com/hookinbox/hookinbox/internal/shop/shopevents"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/webhook"
)

// The DynamoDB methods the shop calls; *dynamodb.Client has them. Handle
// writes only (PutItem); State scans and Access queries.
type dynamoDB interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Effect names, as recorded in the effect ledger. Renaming one makes every
// past event run it again on replay.
const (
	effectGrantAccess       = "grant-access"
	effectWelcomeEmail      = "welcome-email"
	effectCreateInvoice     = "create-invoice"
	effectApplySubscription = "apply-subscription"
)

// Shop handles Stripe events with effects run through an effects.Runner.
// It is safe for concurrent use.
type Shop struct {
	cfg     Config
	db      dynamoDB
	mail    mailer
	billing biller
	now     func() time.Time // the clock of subscription reads
	mux     *processorfn.Mux
}

// New returns a shop that keeps its records in cfg.Table through db
// (typically a *dynamodb.Client), sends email through mail (typically a
// *sesv2.Client) and invoices through billing (see newStripeBilling). Call
// cfg.Validate first; New does not.
func New(cfg Config, db dynamoDB, mail mailer, billing biller) *Shop {
	s := &Shop{cfg: cfg, db: db, mail: mail, billing: billing, now: time.Now}
	// Every event is dispatched by its provider and type before its
	// payload is read: a type not listed here is IGNORED, whatever its
	// body holds (GitHub's and Standard Webhooks' events all are).
	s.mux = processorfn.NewMux().
		On(stripe.Name, s.checkoutCompleted, shopevents.CheckoutCompleted, shopevents.CheckoutAsyncPaid).
		On(stripe.Name, s.subscriptionChanged, shopevents.SubscriptionCreated, shopevents.SubscriptionUpdated, shopevents.SubscriptionDeleted).
		On(adyen.Name, s.adyenNotification, adyenAuthorisation, adyenRefund).
		On(gopay.Name, s.gopayPayment, gopay.Notification).
		On(shopify.Name, s.shopifyOrder, "orders/paid", "orders/create", "orders/updated").
		On(paddle.Name, s.paddleTransaction, paddleCompleted).
		On(mollie.Name, s.molliePayment, molliePaid)
	return s
}

// Handle applies the event's effects, each through fx so that a retry
// skips those already done. It returns an error wrapping
// webhook.ErrNoHandler for an event it does not handle (decided by its
// provider and type alone, before the payload is read), a
// webhook.Permanent error for an event it cannot map (unparsable payload, a
// needed field missing) or an outside system's permanent refusal, and any
// other error when a retry may succeed.
func (s *Shop) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	return s.mux.Handle(ctx, ev, fx)
}

// Handles reports whether the shop handles events of provider with
// eventType; the processor counts every other type as "other" in its
// metrics.
func (s *Shop) Handles(provider, eventType string) bool { return s.mux.Handles(provider, eventType) }

// version returns the version the event's records are written with.
func version(ev webhook.Event) (effects.Version, error) {
	if ev.Created.IsZero() {
		return effects.Version{}, webhook.Permanent(fmt.Errorf("%s %s: no created time to order it by", ev.Type, ev.Key()))
	}
	return effects.Version{At: ev.Created.Unix(), EventID: ev.ID}, nil
}

package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/provider/gopay"
	"github.com/hookinbox/hookinbox/provider/stripe"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/webhook"
)

// Remote is a running stack reached over HTTP, such as `hookinbox dev`:
// deliveries are POSTed to its webhook URL, signed with its secrets, and
// its queue and tables are read with the clients given. What its business
// APIs performed is not visible: Snapshot leaves Performed nil, and the
// ledger is the record of effects. A Remote is safe for concurrent use.
type Remote struct {
	url      string
	secrets  Secrets
	gopay    string // the GoPay stand-in's base URL, or ""
	client   *http.Client
	events   *queue.Queue
	inbox    *inbox.DynamoDB
	ledger   *effects.Ledger
	business businessReader
}

// RemoteConfig names a running stack's webhook URL, signing secrets and
// resources.
type RemoteConfig struct {
	// WebhookURL is Stripe's webhook URL, such as
	// http://127.0.0.1:3000/webhooks/stripe; another provider's events go
	// to the same URL with its name in place of stripe.
	WebhookURL string
	// Secrets are the receiver's signing secrets by provider; a Stripe
	// delivery carries a v1 signature for each.
	Secrets Secrets
	// GoPayStandin, when set, is the base URL of `hookinbox dev`'s GoPay
	// stand-in: a GoPay notification first sets its payment there
	// (PUT /_standin/payments/{id}), as GoPay's state changes before it
	// notifies. Without it the payments must exist at GoPay already.
	GoPayStandin string
	InboxTable   string
	// ShopTable is the example shop's table; when empty, the business
	// state is every item of BusinessTables (TableRecords).
	ShopTable      string
	BusinessTables map[string]string
	EventsQueueURL string
}

// NewRemote returns the Remote of cfg, reading it with clients made from
// awsCfg.
func NewRemote(cfg RemoteConfig, awsCfg aws.Config) *Remote {
	db := dynamodb.NewFromConfig(awsCfg)
	business := TableRecords(db, cfg.BusinessTables)
	if cfg.ShopTable != "" {
		business = shopBusiness(shop.New(shop.Config{Table: cfg.ShopTable, MailFrom: "shop@example.com"}, db, nil, nil))
	}
	return &Remote{
		url: cfg.WebhookURL, secrets: cfg.Secrets, gopay: strings.TrimSuffix(cfg.GoPayStandin, "/"),
		client:   &http.Client{Timeout: 30 * time.Second},
		events:   queue.New(sqs.NewFromConfig(awsCfg), cfg.EventsQueueURL),
		inbox:    inbox.NewDynamoDB(dynamodb.NewFromConfig(awsCfg), cfg.InboxTable),
		ledger:   effects.NewLedger(db, cfg.InboxTable, 0),
		business: business,
	}
}

// Deliver implements Target: a delivery signed now, as the event's
// provider signs it.
func (r *Remote) Deliver(ctx context.Context, ev Event) (int, error) {
	signed, err := r.secrets.Signed(ev, time.Now())
	if err != nil {
		return 0, err
	}
	url := r.url
	if ev.Provider != stripe.Name {
		base, ok := strings.CutSuffix(r.url, "/"+stripe.Name)
		if !ok {
			return 0, fmt.Errorf("deliver %s: the webhook URL %s does not end in /stripe, so the %s URL is unknown", ev.Key(), r.url, ev.Provider)
		}
		url = base + "/" + ev.Provider
	}
	if ev.Provider == gopay.Name {
		if err := r.setGoPayPayment(ctx, ev); err != nil {
			return 0, err
		}
	}
	if len(signed.Query) > 0 {
		q := neturl.Values{}
		for k, v := range signed.Query {
			q.Set(k, v)
		}
		url += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, signed.Method, url, bytes.NewReader(signed.Body))
	if err != nil {
		return 0, err
	}
	for k, v := range signed.Header {
		req.Header.Set(k, v)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("deliver %s: %w", ev.Key(), err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// setGoPayPayment sets the payment of a GoPay notification on the GoPay
// stand-in, when there is one.
func (r *Remote) setGoPayPayment(ctx context.Context, ev Event) error {
	if r.gopay == "" {
		return nil
	}
	p, err := ev.GoPayPayment()
	if err != nil {
		return err
	}
	b, _ := json.Marshal(p)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, r.gopay+"/_standin/payments/"+ev.ID, bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("set %s on the GoPay stand-in: %w", ev.Key(), err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("set %s on the GoPay stand-in: %s", ev.Key(), resp.Status)
	}
	return nil
}

// Requeue implements Target.
func (r *Remote) Requeue(ctx context.Context, ev Event) error {
	return r.events.Send(ctx, webhook.Envelope{Key: ev.Key(), Type: ev.Type})
}

// Busy implements Target.
func (r *Remote) Busy(ctx context.Context) (int, int, error) {
	return busy(ctx, r.events, r.inbox)
}

// Snapshot implements Target. The business state is the whole shop
// table, or every item of the business's tables: Compare the events of a
// corpus on a stack that holds nothing else, or filter with Within.
func (r *Remote) Snapshot(ctx context.Context, keys []webhook.Key) (Snapshot, error) {
	return snapshot(ctx, r.inbox, r.ledger, r.business, keys)
}

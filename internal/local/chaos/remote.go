package chaos

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
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
	url     string
	secrets Secrets
	client  *http.Client
	sqs     *sqs.Client
	events  *queue.Queue
	inbox   *inbox.DynamoDB
	ledger  *effects.Ledger
	shop    *shop.Shop
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
	Secrets        Secrets
	InboxTable     string
	ShopTable      string
	EventsQueueURL string
}

// NewRemote returns the Remote of cfg, reading it with clients made from
// awsCfg.
func NewRemote(cfg RemoteConfig, awsCfg aws.Config) *Remote {
	db, sq := dynamodb.NewFromConfig(awsCfg), sqs.NewFromConfig(awsCfg)
	return &Remote{
		url: cfg.WebhookURL, secrets: cfg.Secrets,
		client: &http.Client{Timeout: 30 * time.Second},
		sqs:    sq, events: queue.New(sq, cfg.EventsQueueURL),
		inbox:  inbox.NewDynamoDB(awsapi.DynamoDBFromConfig(awsCfg), cfg.InboxTable),
		ledger: effects.NewLedger(db, cfg.InboxTable, 0),
		shop:   shop.New(shop.Config{Table: cfg.ShopTable, MailFrom: "shop@example.com"}, db, nil, nil),
	}
}

// Deliver implements Target: a POST signed now, as the event's provider
// signs it.
func (r *Remote) Deliver(ctx context.Context, ev Event) (int, error) {
	header, body, err := r.secrets.Signed(ev, time.Now())
	if err != nil {
		return 0, err
	}
	url := r.url
	if ev.Provider != "stripe" {
		base, ok := strings.CutSuffix(r.url, "/stripe")
		if !ok {
			return 0, fmt.Errorf("deliver %s: the webhook URL %s does not end in /stripe, so the %s URL is unknown", ev.Key(), r.url, ev.Provider)
		}
		url = base + "/" + ev.Provider
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if ev.Provider == "stripe" {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("deliver %s: %w", ev.Key(), err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Requeue implements Target.
func (r *Remote) Requeue(ctx context.Context, ev Event) error {
	return r.events.Send(ctx, webhook.Envelope{Key: ev.Key(), Type: ev.Type})
}

// Busy implements Target.
func (r *Remote) Busy(ctx context.Context) (int, int, error) {
	return busy(ctx, r.sqs, r.events.URL(), r.inbox)
}

// Snapshot implements Target. The business state is the whole shop
// table: Compare the events of a corpus on a stack that holds nothing
// else, or filter with Only.
func (r *Remote) Snapshot(ctx context.Context, keys []webhook.Key) (Snapshot, error) {
	return snapshot(ctx, r.inbox, r.ledger, r.shop, keys)
}

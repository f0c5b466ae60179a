package chaos

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
	"github.com/hookinbox/hookinbox/webhook"
)

// Remote is a running stack reached over HTTP, such as `hookinbox dev`:
// deliveries are POSTed to its webhook URL, signed with its secrets, and
// its queue and tables are read with the clients given. What its business
// APIs performed is not visible: Snapshot leaves Performed nil, and the
// ledger is the record of effects. A Remote is safe for concurrent use.
type Remote struct {
	url     string
	secrets []string
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
	WebhookURL     string   // e.g. http://127.0.0.1:3000/webhooks/stripe
	Secrets        []string // the receiver's signing secrets; deliveries carry a v1 signature for each
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

// Deliver implements Target: a POST signed now, as Stripe signs it.
func (r *Remote) Deliver(ctx context.Context, ev Event) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(ev.Raw))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	req.Header.Set("Stripe-Signature", verifytest.SignStripe(ev.Raw, time.Now(), r.secrets...))
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

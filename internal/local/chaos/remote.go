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

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/ledger"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
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
	url       string
	secrets   Secrets
	endpoints map[string]string // the stack's, where its stand-ins are
	client    *http.Client
	events    *queue.Queue
	inbox     *inbox.DynamoDB
	ledger    *ledger.Ledger
	business  businessReader
}

// RemoteConfig names a running stack's webhook URL, signing secrets and
// resources.
type RemoteConfig struct {
	// WebhookURL is one provider's webhook URL, such as
	// http://127.0.0.1:3000/webhooks/stripe; another provider's events go
	// to the same URL with its name in place of the last segment.
	WebhookURL string
	// Secrets are the receiver's signing secrets by provider; a delivery
	// is signed with all of its provider's.
	Secrets Secrets
	// Endpoints are the running stack's (`hookinbox dev`'s state file):
	// an id-only provider's notification first sets its object on the
	// provider's stand-in among them (pipeline.StandinURL), as the
	// provider's state changes before it notifies. Without one, the
	// objects must exist at the provider already.
	Endpoints  map[string]string
	InboxTable string
	// ShopTable is the example shop's table; when empty, the business
	// state is every item of BusinessTables (tableRecords).
	ShopTable      string
	BusinessTables map[string]string
	EventsQueueURL string
}

// NewRemote returns the Remote of cfg, reading it with clients made from
// awsCfg.
func NewRemote(cfg RemoteConfig, awsCfg aws.Config) *Remote {
	db := dynamodb.NewFromConfig(awsCfg)
	business := tableRecords(db, cfg.BusinessTables)
	if cfg.ShopTable != "" {
		business = shopBusiness(shop.New(shop.Config{Table: cfg.ShopTable, MailFrom: "shop@example.com"}, db, nil, nil))
	}
	return &Remote{
		url: cfg.WebhookURL, secrets: cfg.Secrets, endpoints: cfg.Endpoints,
		client:   &http.Client{Timeout: 30 * time.Second},
		events:   queue.New(sqs.NewFromConfig(awsCfg), cfg.EventsQueueURL),
		inbox:    inbox.NewDynamoDB(dynamodb.NewFromConfig(awsCfg), cfg.InboxTable),
		ledger:   ledger.New(db, cfg.InboxTable, 0),
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
	i := strings.LastIndex(r.url, "/")
	base := r.url[:max(i, 0)]
	if _, known := registry.Lookup(r.url[i+1:]); !known {
		return 0, fmt.Errorf("deliver %s: the webhook URL %s does not end in a provider's name, so the %s URL is unknown", ev.Key(), r.url, ev.Provider)
	}
	url := base + "/" + ev.Provider
	if p, _ := registry.Lookup(ev.Provider); p.Webhook().IDOnly {
		if err := r.stage(ctx, ev); err != nil {
			return 0, err
		}
	}
	req, err := lambdalocal.HTTPRequest(ctx, url, signed)
	if err != nil {
		return 0, err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("deliver %s: %w", ev.Key(), err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// stage sets the object of an id-only provider's notification on the
// provider's stand-in, when the stack has one.
func (r *Remote) stage(ctx context.Context, ev Event) error {
	base, ok := pipeline.StandinURL(ev.Provider, r.endpoints)
	if !ok {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, strings.TrimSuffix(base, "/")+"/_standin/payments/"+ev.ID, bytes.NewReader(ev.Raw))
	if err != nil {
		return err
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("set %s on the %s stand-in: %w", ev.Key(), ev.Provider, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("set %s on the %s stand-in: %s", ev.Key(), ev.Provider, resp.Status)
	}
	return nil
}

// Requeue implements Target.
func (r *Remote) Requeue(ctx context.Context, ev Event) error {
	return r.events.Send(ctx, queue.Envelope{Key: ev.Key(), Type: ev.Type})
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

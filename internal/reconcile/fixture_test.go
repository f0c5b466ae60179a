package reconcile_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/internal/queue"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// reconciler returns the ReconcilerFunction as built for Lambda, logging
// to p.Logs, as a function that runs it on a scheduled event.
func reconciler(t *testing.T, p *pipelinetest.Pipeline, overrides map[string]string) func(context.Context) (reconcile.Summary, error) {
	t.Helper()
	handle := p.Build(t, "ReconcilerFunction", overrides).(func(context.Context, events.EventBridgeEvent) (reconcile.Summary, error))
	return func(ctx context.Context) (reconcile.Summary, error) { return handle(ctx, events.EventBridgeEvent{}) }
}

// checkout returns the key and body of a checkout.session.completed event
// for customer n, created at.
func checkout(n int, at time.Time) (webhook.Key, []byte) {
	return pipelinetest.Checkout("recon", n, at)
}

// stripeHas adds n checkout events to p's Stripe stand-in, for customers
// first to first+n-1, the i-th created at at(i), and returns their keys
// and bodies.
func stripeHas(t *testing.T, p *pipelinetest.Pipeline, first, n int, at func(i int) time.Time) ([]webhook.Key, [][]byte) {
	t.Helper()
	keys, bodies := make([]webhook.Key, n), make([][]byte, n)
	for i := range n {
		keys[i], bodies[i] = checkout(first+i, at(i))
		if err := p.Stripe.AddEvent(bodies[i]); err != nil {
			t.Fatal(err)
		}
	}
	return keys, bodies
}

// The parts of the reconciler's dependencies fromStripe passes on; tests
// wrap the real ones to count or fail calls.
type (
	envelopeSender interface {
		Send(ctx context.Context, env queue.Envelope) error
	}
	eventSource interface {
		Next(ctx context.Context, from, to time.Time) ([]webhook.Event, time.Time, error)
	}
	checkpoints interface {
		Load(ctx context.Context, provider string) (reconcile.Checkpoint, bool, error)
		Save(ctx context.Context, provider string, cp reconcile.Checkpoint) error
		Skip(ctx context.Context, provider string, ev webhook.Event, reason string) error
	}
)

// fromStripe returns a reconciler of p's inbox, as the ReconcilerFunction
// wires it: it re-enqueues through q, and claims the events source lists
// through an intake of its own (on cfg's clock) that sends to q too.
func fromStripe(p *pipelinetest.Pipeline, cfg reconcile.Config, q envelopeSender, source eventSource, cps checkpoints, log *slog.Logger) *reconcile.Handler {
	in := intake.New(intake.Config{FromProviderAPI: true, Now: cfg.Now}, p.Inbox, q, nil)
	return reconcile.New(cfg, p.Inbox, q, in, []reconcile.Source{{Provider: "stripe", Source: provider.Source{List: source}}}, cps, log)
}

// refusingClaims is an inbox whose claims of the keys refuse returns an
// error for fail with it.
type refusingClaims struct {
	*inbox.DynamoDB
	refuse func(webhook.Key) error
}

func (s refusingClaims) Claim(ctx context.Context, c inbox.Claim) (inbox.Item, error) {
	if err := s.refuse(c.Event.Key()); err != nil {
		return inbox.Item{}, err
	}
	return s.DynamoDB.Claim(ctx, c)
}

// countingSender passes sends on to inner and counts, per key, those that
// went through. refuse, when set, is asked first (under the lock, so it
// may keep state) and a send it refuses fails with its error; after, when
// set, is called after each send that went through, with the count so far.
type countingSender struct {
	inner  envelopeSender
	refuse func(key webhook.Key) error
	after  func(n int)

	mu    sync.Mutex
	sends map[webhook.Key]int
	n     int
}

func newCountingSender(inner envelopeSender) *countingSender {
	return &countingSender{inner: inner, sends: map[webhook.Key]int{}}
}

func (f *countingSender) Send(ctx context.Context, env queue.Envelope) error {
	f.mu.Lock()
	if f.refuse != nil {
		if err := f.refuse(env.Key); err != nil {
			f.mu.Unlock()
			return err
		}
	}
	f.sends[env.Key]++
	f.n++
	n, after := f.n, f.after
	f.mu.Unlock()
	if after != nil {
		after(n)
	}
	return f.inner.Send(ctx, env)
}

// queued returns how many messages the events queue holds per key, and
// leaves them there.
func queued(t *testing.T, p *pipelinetest.Pipeline) map[webhook.Key]int {
	t.Helper()
	got := map[webhook.Key]int{}
	for _, m := range pipelinetest.Peek(t, p.Events) {
		env, err := queue.ParseEnvelope(m.Body)
		if err != nil {
			t.Fatal(err)
		}
		got[env.Key]++
	}
	return got
}

// clock is a test clock that a test can move from inside a call.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// pagedSource records how many events each Next returned.
type pagedSource struct {
	*stripe.Events
	mu    sync.Mutex
	sizes []int
}

func (p *pagedSource) Next(ctx context.Context, from, to time.Time) ([]webhook.Event, time.Time, error) {
	evs, upTo, err := p.Events.Next(ctx, from, to)
	p.mu.Lock()
	p.sizes = append(p.sizes, len(evs))
	p.mu.Unlock()
	return evs, upTo, err
}

// savedCheckpoints records every checkpoint saved.
type savedCheckpoints struct {
	*reconcile.Checkpoints
	mu    sync.Mutex
	saved []time.Time
}

func (c *savedCheckpoints) Save(ctx context.Context, provider string, cp reconcile.Checkpoint) error {
	c.mu.Lock()
	c.saved = append(c.saved, cp.At)
	c.mu.Unlock()
	return c.Checkpoints.Save(ctx, provider, cp)
}

// skippedReason returns the reason recorded beside provider's checkpoint
// for the skipped event key.
func skippedReason(t *testing.T, p *pipelinetest.Pipeline, provider string, key webhook.Key) string {
	t.Helper()
	out, err := p.DynamoDB.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(p.Stack.Tables["InboxTable"]), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: reconcile.CheckpointPartition(provider)},
			"sk": &types.AttributeValueMemberS{Value: reconcile.SkippedPrefix + string(key)},
		},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("skipped record: %v, %v", out, err)
	}
	reason, _ := out.Item["reason"].(*types.AttributeValueMemberS)
	if reason == nil {
		t.Fatalf("skipped record %v has no reason", out.Item)
	}
	return reason.Value
}

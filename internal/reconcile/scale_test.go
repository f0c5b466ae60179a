package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn/stripeapi"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/webhook"
)

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
	*stripeapi.Events
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

func TestListingAndCheckpointAdvancePageByPageWithinTheDeadline(t *testing.T) {
	s := pipelinetest.New(t)
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	// Bursts: four events in one second, then a gap.
	keys, _ := stripeHas(t, s, 300, 20, func(i int) time.Time { return start.Add(time.Duration(i/4) * 5 * time.Minute) })
	c := &clock{t: time.Now()}
	sender := newCountingSender(s.Events)
	source := &pagedSource{Events: stripeapi.NewEvents(secrets.Static(pipelinetest.StripeKey), s.StripeURL, nil)}
	source.PageSize = 3
	cps := &savedCheckpoints{Checkpoints: reconcile.NewCheckpoints(s.DynamoDB, s.Stack.Tables["InboxTable"])}
	h := fromStripe(s, reconcile.Config{Lookback: 2 * time.Hour, Margin: time.Minute, Now: c.Now}, sender, source, cps, nil)

	// The function's deadline is 10 minutes away; after the 9th event
	// the clock is moved to within the margin of it.
	deadline := c.Now().Add(10 * time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	sender.after = func(n int) {
		if n == 9 {
			c.Set(deadline.Add(-30 * time.Second))
		}
	}
	sum, err := h.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "about to time out") {
		t.Fatalf("first run: %v, want it stopped by the deadline", err)
	}
	if sum.Missed != 9 {
		t.Errorf("first run claimed %d, want 9", sum.Missed)
	}
	// Every page held at most a page of events (a second with four gets
	// read whole), and the checkpoint was saved after each, moving on.
	for i, n := range source.sizes {
		if n > 4 {
			t.Errorf("list %d returned %d events, want at most a page (3), or one second's 4", i, n)
		}
	}
	if len(cps.saved) < 3 {
		t.Errorf("checkpoint saved %d times, want once per page", len(cps.saved))
	}
	for i := 1; i < len(cps.saved); i++ {
		if cps.saved[i].Before(cps.saved[i-1]) {
			t.Errorf("checkpoint moved back: %v", cps.saved)
		}
	}
	// It stopped at the 10th event: the checkpoint is at that event's
	// second, so nothing after it was given up.
	cp, _, _ := cps.Load(ctx, "stripe")
	if want := start.Add(10 * time.Minute); !cp.At.Equal(want) {
		t.Errorf("checkpoint = %v, want %v (the burst the run stopped in)", cp.At, want)
	}

	// The next run, with time to spare, finishes the window.
	c.Set(time.Now())
	sender.after = nil
	sum, err = h.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Missed != 11 {
		t.Errorf("second run claimed %d, want the 11 left", sum.Missed)
	}
	for _, k := range keys {
		if sender.sends[k] != 1 {
			t.Errorf("%s sent %d times, want 1", k, sender.sends[k])
		}
	}
}

func TestAnEventThatCannotBeAcceptedIsSkippedAfterMaxTries(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	now := time.Now().Truncate(time.Second)
	start := now.Add(-30 * time.Minute)
	keys, _ := stripeHas(t, s, 400, 5, func(i int) time.Time { return start.Add(time.Duration(i) * time.Minute) })
	poison := keys[1]
	sender := newCountingSender(s.Events)
	sqsDown := false
	sender.refuse = func(k webhook.Key) error {
		if sqsDown || k == poison {
			return errors.New("sqs: refused; last recipient ann@example.com")
		}
		return nil
	}
	cps := reconcile.NewCheckpoints(s.DynamoDB, s.Stack.Tables["InboxTable"])
	metricLines := &pipelinetest.SyncBuffer{}
	h := fromStripe(s, reconcile.Config{Lookback: time.Hour, Metrics: metrics.New(metricLines, "hookinbox/test"), Now: func() time.Time { return now }},
		sender, stripeapi.NewEvents(secrets.Static(pipelinetest.StripeKey), s.StripeURL, nil), cps, slog.New(slog.NewJSONHandler(s.Logs, nil)))

	// SQS refuses everything: that is the path failing, not one event,
	// and it does not count towards skipping.
	sqsDown = true
	if _, err := h.Run(ctx); err == nil {
		t.Fatal("run with SQS down: no error")
	}
	cp, _, _ := cps.Load(ctx, "stripe")
	if cp.Blocked != keys[0] || cp.Tries != 0 || !cp.At.Equal(start) {
		t.Errorf("after the outage: %+v, want blocked at the first event with no tries counted", cp)
	}
	sqsDown = false

	for run := 1; run <= 3; run++ {
		sum, err := h.Run(ctx)
		cp, _, _ := cps.Load(ctx, "stripe")
		if run < 3 {
			if err == nil || !strings.Contains(err.Error(), string(poison)) {
				t.Errorf("run %d: %v, want the poison event's failure", run, err)
			}
			if cp.Blocked != poison || cp.Tries != run || !cp.At.Equal(start.Add(time.Minute)) {
				t.Errorf("run %d: checkpoint %+v, want held at the poison event with %d tries", run, cp, run)
			}
			if strings.Contains(err.Error(), "ann@example.com") {
				t.Errorf("run %d: error text carries an email address: %v", run, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("run 3: %v, want the poison event skipped", err)
		}
		if sum.Skipped != 1 || !cp.At.Equal(now.Add(-5*time.Minute)) || cp.Blocked != "" {
			t.Errorf("run 3: skipped %d, checkpoint %+v; want 1 and the checkpoint moved to now less the settle time", sum.Skipped, cp)
		}
	}
	// The skipped event is recorded beside the checkpoint, without the address.
	out, err := s.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.Stack.Tables["InboxTable"]), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: reconcile.CheckpointPartition("stripe")},
			"sk": &types.AttributeValueMemberS{Value: reconcile.SkippedPrefix + string(poison)},
		},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("skipped record: %v, %v", out, err)
	}
	reason := out.Item["reason"].(*types.AttributeValueMemberS).Value
	if !strings.Contains(reason, "sqs: refused") || strings.Contains(reason, "@") {
		t.Errorf("skipped record's reason = %q, want the failure without the address", reason)
	}
	// The run's metric line counts it (by provider), and an ERROR line
	// names it.
	lines, err := metrics.ReadLines(strings.NewReader(metricLines.String()))
	if err != nil {
		t.Fatal(err)
	}
	var skipped []float64
	for _, l := range lines {
		if v, ok := l.Values[metrics.Skipped]; ok {
			skipped = append(skipped, v)
		}
	}
	if diff := cmp.Diff([]float64{0, 0, 0, 1}, skipped); diff != "" {
		t.Errorf("Skipped per run (-want +got):\n%s", diff)
	}
	logs := s.Logs.String()
	if !strings.Contains(logs, `"msg":"skipped an event that could not be accepted"`) || !strings.Contains(logs, string(poison)) {
		t.Errorf("no ERROR line naming the skipped event in:\n%s", logs)
	}
	if strings.Contains(logs, "ann@example.com") {
		t.Errorf("an email address reached the log:\n%s", logs)
	}
	// Every other event was claimed and sent exactly once.
	for _, k := range keys {
		want := 1
		if k == poison {
			want = 0
		}
		if sender.sends[k] != want {
			t.Errorf("%s sent %d times, want %d", k, sender.sends[k], want)
		}
	}
}

func TestStuckClaimsShareABudgetAcrossShardsFromARotatingStart(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	now := time.Now()
	// Three stuck claims in every shard.
	perShard := map[int][]webhook.Key{}
	for n := 0; len(perShard) < inbox.PendingShards || !full(perShard, 3); n++ {
		key, body := checkout(500+n, now.Add(-time.Hour))
		shard := inbox.ShardOf(key)
		if len(perShard[shard]) == 3 {
			continue
		}
		ev := webhook.Event{Provider: "stripe", ID: key.EventID(), Type: "checkout.session.completed", Created: now.Add(-time.Hour), Raw: body}
		c := inbox.Claim{Event: ev, At: now.Add(-time.Hour + time.Duration(n)*time.Second), TTL: time.Hour}
		if _, err := s.Inbox.Claim(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := s.Inbox.PutPayload(ctx, c.NewItem(), body); err != nil {
			t.Fatal(err)
		}
		perShard[shard] = append(perShard[shard], key)
	}
	c := &clock{t: now}
	sender := newCountingSender(s.Events)
	h := reconcile.New(reconcile.Config{Limit: inbox.PendingShards, Margin: time.Minute, Now: c.Now}, s.Inbox, sender, nil, nil, nil, nil)

	// A budget of one claim a shard: the oldest of each shard, not the
	// first shard's three.
	sum, err := h.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[webhook.Key]int{}
	for _, keys := range perShard {
		want[keys[0]] = 1
	}
	if diff := cmp.Diff(want, sender.sends); diff != "" {
		t.Errorf("re-enqueued (-want +got):\n%s", diff)
	}
	if sum.Reenqueued != inbox.PendingShards {
		t.Errorf("re-enqueued %d, want %d", sum.Reenqueued, inbox.PendingShards)
	}

	// Runs cut short by the deadline after one claim: each starts at
	// another shard, so none is starved.
	deadline := now.Add(time.Hour)
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	served := map[int]bool{}
	for run := 1; run <= 2; run++ {
		at := now.Add(time.Duration(run) * time.Minute)
		c.Set(at)
		sender.after = func(int) { c.Set(deadline) }
		before := fmt.Sprint(sender.sends)
		sum, err := h.Run(dctx)
		if err == nil || !strings.Contains(err.Error(), "about to time out") {
			t.Errorf("run %d: %v, want stopped by the deadline", run, err)
		}
		if sum.StartShard != reconcile.StartShard(at) || sum.Reenqueued != 1 {
			t.Errorf("run %d: start shard %d, re-enqueued %d; want %d and 1 (sends before %s)", run, sum.StartShard, sum.Reenqueued, reconcile.StartShard(at), before)
		}
		if k := webhook.Key(sum.Events[0].Key); inbox.ShardOf(k) != sum.StartShard {
			t.Errorf("run %d re-enqueued %s of shard %d, want one of its start shard %d", run, k, inbox.ShardOf(k), sum.StartShard)
		}
		served[sum.StartShard] = true
	}
	if len(served) != 2 {
		t.Errorf("two runs a minute apart started at the same shard: %v", served)
	}
}

func full(m map[int][]webhook.Key, n int) bool {
	for _, v := range m {
		if len(v) < n {
			return false
		}
	}
	return true
}

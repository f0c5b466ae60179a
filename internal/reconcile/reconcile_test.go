package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/emf"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/platform/secrets/secretstest"
	"github.com/hookinbox/hookinbox/internal/providers/stripe"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestOutageEventsAreClaimedOnceAndProcessedOnce(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	// Stripe holds 30 events of the 40 minutes before the 5-minute settle
	// time; only every third reached the receiver.
	start := time.Now().Add(-40 * time.Minute)
	all, bodies := stripeHas(t, s, 0, 30, func(i int) time.Time { return start.Add(time.Duration(i) * time.Minute) })
	var delivered []webhook.Key
	missed := map[webhook.Key]int{}
	for i, key := range all {
		body := bodies[i]
		if i%3 == 0 {
			s.Deliver(t, body)
			delivered = append(delivered, key)
		} else {
			missed[key] = 1
		}
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, delivered, inbox.Done) })
	// One of a type the shop does not handle, never delivered.
	other := webhook.NewKey("stripe", "evt_recon_refund")
	refund := fmt.Sprintf(`{"id":%q,"object":"event","type":"charge.refunded","created":%d,"livemode":false,"data":{"object":{"id":"ch_1"}}}`,
		other.EventID(), start.Add(90*time.Second).Unix())
	if err := s.Stripe.AddEvent([]byte(refund)); err != nil {
		t.Fatal(err)
	}
	// One more, a minute old: its webhook may still be on its way, so the
	// reconciler leaves it to a later run.
	fresh, freshBody := checkout(99, time.Now().Add(-time.Minute))
	if err := s.Stripe.AddEvent(freshBody); err != nil {
		t.Fatal(err)
	}

	run := reconciler(t, s, map[string]string{"STRIPE_EVENTS_LOOKBACK": "1h"})
	sum, err := run(ctx)
	if err != nil {
		t.Fatalf("reconciler: %v\n%+v", err, sum)
	}
	if sum.Listed != 30 || sum.Missed != 20 || sum.Reenqueued != 0 {
		t.Errorf("summary: listed %d, missed %d, re-enqueued %d; want 30, 20, 0", sum.Listed, sum.Missed, sum.Reenqueued)
	}
	if diff := cmp.Diff(missed, queued(t, s)); diff != "" {
		t.Errorf("enqueued by the reconciler (-want +got):\n%s", diff)
	}
	// Counted: Missed by provider, and the messages the intake sent.
	lines := s.Metrics(t)
	if got := emf.Sum(lines, metrics.Missed, map[string]string{metrics.DimProvider: "stripe"}, time.Time{}); got != 20 {
		t.Errorf("Missed = %v, want 20", got)
	}
	if got := emf.Sum(lines, metrics.CheckpointLag, nil, time.Time{}); got < 4*60 || got > 6*60 {
		t.Errorf("CheckpointLag = %v s, want about 5 minutes", got)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, all, inbox.Done) })
	s.EffectsOnce(t, all)
	if _, err := s.Inbox.Get(ctx, fresh); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("an event younger than the settle time was claimed: %v", err)
	}

	// The checkpoint is saved a few minutes behind now.
	cp, ok, err := reconcile.NewCheckpoints(s.DynamoDB, s.Stack.Tables["InboxTable"]).Load(ctx, "stripe")
	if err != nil || !ok || time.Since(cp.At) < 4*time.Minute || time.Since(cp.At) > 6*time.Minute {
		t.Errorf("checkpoint %v (found %v, %v), want about 5 minutes ago", cp, ok, err)
	}
	if !sum.Checkpoint.Equal(cp.At) {
		t.Errorf("summary checkpoint %v, stored %v", sum.Checkpoint, cp)
	}
	// Only the types the shop handles were asked for: the refund event
	// was never listed, so never claimed.
	if _, err := s.Inbox.Get(ctx, other); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("an event of a type the shop does not handle was claimed: %v", err)
	}
	for _, q := range s.Stripe.EventQueries() {
		if !strings.Contains(q, "types") || !strings.Contains(q, "checkout.session.completed") {
			t.Errorf("events listed without the shop's types: %s", q)
		}
	}

	again, err := run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again.Missed != 0 || again.Reenqueued != 0 || again.Stuck != 0 {
		t.Errorf("second run: %+v, want nothing enqueued", again)
	}
	if got := queued(t, s); len(got) != 0 {
		t.Errorf("events queue after the second run: %v", got)
	}
	s.EffectsOnce(t, all)
}

func TestCheckpointStaysBeforeTheEventThatFailed(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	now := time.Now().Truncate(time.Second)
	start := now.Add(-20 * time.Minute)
	keys, _ := stripeHas(t, s, 100, 10, func(i int) time.Time { return start.Add(time.Duration(i) * time.Minute) })
	sender := newCountingSender(s.Events)
	flaky := keys[6] // its first send fails
	sender.refuse = func(k webhook.Key) error {
		if k != flaky {
			return nil
		}
		flaky = ""
		return errors.New("sqs: throttled")
	}
	cps := reconcile.NewCheckpoints(s.DynamoDB, s.Stack.Tables["InboxTable"])
	source := stripe.NewEvents(secretstest.Static(pipelinetest.StripeKey), s.StripeURL, nil)
	source.PageSize = 3 // four pages: auto-pagination
	h := fromStripe(s, reconcile.Config{Lookback: time.Hour, Now: func() time.Time { return now }}, sender, source, cps, nil)

	sum, err := h.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), string(keys[6])) {
		t.Fatalf("first run error = %v, want the failed claim of %s", err, keys[6])
	}
	// The run goes on past the one failure (the path works), but the
	// checkpoint stays before it.
	if sum.Missed != 9 {
		t.Errorf("first run claimed %d, want the 9 that did not fail", sum.Missed)
	}
	cp, _, _ := cps.Load(ctx, "stripe")
	if want := (reconcile.Checkpoint{At: start.Add(6 * time.Minute), Blocked: keys[6], Tries: 1}); !cp.At.Equal(want.At) || cp.Blocked != want.Blocked || cp.Tries != want.Tries {
		t.Errorf("checkpoint after the failure = %+v, want %+v (the failed event's created)", cp, want)
	}
	if it, err := s.Inbox.Get(ctx, keys[6]); err != nil || it.Status != inbox.Received {
		t.Errorf("the failed event's claim: %v, %v; want it kept in RECEIVED, unsent", it.Status, err)
	}

	// The next run's stuck pass sends the unsent claim; its listing finds
	// it claimed, and moves on.
	sum, err = h.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Reenqueued != 1 || sum.Missed != 0 || sum.Listed != 4 {
		t.Errorf("second run re-enqueued %d, listed %d and claimed %d; want 1, 4 (from the failed event on) and 0", sum.Reenqueued, sum.Listed, sum.Missed)
	}
	cp, _, _ = cps.Load(ctx, "stripe")
	if want := now.Add(-5 * time.Minute); !cp.At.Equal(want) || cp.Blocked != "" {
		t.Errorf("checkpoint = %+v, want %v and nothing blocked (now less the settle time)", cp, want)
	}
	for _, k := range keys {
		if sender.sends[k] != 1 {
			t.Errorf("%s sent %d times, want 1", k, sender.sends[k])
		}
	}
	// A run that saves an older checkpoint does not move it back.
	if err := cps.Save(ctx, "stripe", reconcile.Checkpoint{At: start}); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := cps.Load(ctx, "stripe"); !got.At.Equal(now.Add(-5 * time.Minute)) {
		t.Errorf("checkpoint moved back to %v", got)
	}
}

func TestStuckClaimsAreReenqueuedAndAlarmed(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	now := time.Now()
	claim := func(n int, at time.Time) webhook.Key {
		t.Helper()
		key, body := checkout(200+n, at)
		ev := webhook.Event{Provider: "stripe", ID: key.EventID(), Type: "checkout.session.completed", Created: at, Raw: body}
		it, err := s.Inbox.Claim(ctx, inbox.Claim{Event: ev, At: at, TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Inbox.PutPayload(ctx, it, body); err != nil {
			t.Fatal(err)
		}
		return it.Key
	}
	// The receiver died between claim and send, 20 minutes ago.
	crashed := claim(0, now.Add(-20*time.Minute))
	// A transient failure 20 minutes ago whose message was lost.
	failed := claim(1, now.Add(-30*time.Minute))
	if _, err := s.Inbox.Lease(ctx, failed, "w", now.Add(-21*time.Minute), time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Inbox.Finish(ctx, failed, "w", inbox.Result{Status: inbox.Failed, Error: "ses: throttled", At: now.Add(-20 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	// A worker died holding a lease that ended 30 minutes ago.
	abandoned := claim(2, now.Add(-50*time.Minute))
	if _, err := s.Inbox.Lease(ctx, abandoned, "w", now.Add(-45*time.Minute), 15*time.Minute); err != nil {
		t.Fatal(err)
	}
	// Fresh, and finished: neither is stuck.
	claim(3, now.Add(-time.Minute))

	run := reconciler(t, s, nil)
	sum, err := run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stuck != 3 || sum.Reenqueued != 3 || sum.OverdueLeases != 1 || sum.Missed != 0 {
		t.Errorf("summary %+v; want 3 stuck, 3 re-enqueued, 1 of them an overdue lease", sum)
	}
	if diff := cmp.Diff(map[webhook.Key]int{crashed: 1, failed: 1, abandoned: 1}, queued(t, s)); diff != "" {
		t.Errorf("re-enqueued (-want +got):\n%s", diff)
	}

	// The run records StuckClaims without dimensions, in the namespace
	// the alarm watches, and what it re-enqueued.
	var runs int
	for _, l := range s.Metrics(t) {
		if _, ok := l.Values[metrics.StuckClaims]; !ok {
			continue
		}
		runs++
		if l.Namespace != "hookinbox/"+s.Stack.Name || len(l.Dimensions) != 1 || len(l.Dimensions[0]) != 0 ||
			l.Values[metrics.StuckClaims] != 3 || l.Values[metrics.Reconciled] != 3 || l.Values[metrics.OverdueLeases] != 1 ||
			l.Units[metrics.StuckClaims] != metrics.Count {
			t.Errorf("metric line %+v", l)
		}
	}
	if runs != 1 {
		t.Errorf("%d StuckClaims lines after one run, want 1", runs)
	}

	// The abandoned lease's event is taken over and finished too.
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllIn(t, []webhook.Key{crashed, failed, abandoned}, inbox.Done) })
	s.EffectsOnce(t, []webhook.Key{crashed, failed, abandoned})

	again, err := run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if again.Reenqueued != 0 || again.Stuck != 0 || again.OverdueLeases != 0 {
		t.Errorf("second run %+v; want nothing stuck", again)
	}
	if got := queued(t, s); len(got) != 0 {
		t.Errorf("events queue after the second run: %v", got)
	}
}

func TestListingAndCheckpointAdvancePageByPageWithinTheDeadline(t *testing.T) {
	s := pipelinetest.New(t)
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	// Bursts: four events in one second, then a gap.
	keys, _ := stripeHas(t, s, 300, 20, func(i int) time.Time { return start.Add(time.Duration(i/4) * 5 * time.Minute) })
	c := &clock{t: time.Now()}
	sender := newCountingSender(s.Events)
	source := &pagedSource{Events: stripe.NewEvents(secretstest.Static(pipelinetest.StripeKey), s.StripeURL, nil)}
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

func TestAnEventThatCannotBeAcceptedIsSkippedAfterThreeRuns(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	now := time.Now().Truncate(time.Second)
	start := now.Add(-30 * time.Minute)
	keys, _ := stripeHas(t, s, 400, 5, func(i int) time.Time { return start.Add(time.Duration(i) * time.Minute) })
	poison := keys[1]
	sender := newCountingSender(s.Events)
	dbDown := false
	// A claim DynamoDB refuses cannot be accepted; a send SQS refuses
	// leaves its claim for the stuck pass.
	store := refusingClaims{DynamoDB: s.Inbox, refuse: func(k webhook.Key) error {
		if dbDown || k == poison {
			return errors.New("dynamodb: refused; last recipient ann@example.com")
		}
		return nil
	}}
	cps := reconcile.NewCheckpoints(s.DynamoDB, s.Stack.Tables["InboxTable"])
	metricLines := &pipelinetest.SyncBuffer{}
	cfg := reconcile.Config{Lookback: time.Hour, Metrics: metrics.New(metricLines, "hookinbox/test"), Now: func() time.Time { return now }}
	in := intake.New(intake.Config{FromProviderAPI: true, Now: cfg.Now}, store, sender, nil)
	h := reconcile.New(cfg, s.Inbox, sender, in, []reconcile.Source{{Provider: "stripe", Source: provider.Source{List: stripe.NewEvents(secretstest.Static(pipelinetest.StripeKey), s.StripeURL, nil)}}},
		cps, slog.New(slog.NewJSONHandler(s.Logs, nil)))

	// DynamoDB refuses every claim: that is the path failing, not one
	// event, and it does not count towards skipping.
	dbDown = true
	if _, err := h.Run(ctx); err == nil {
		t.Fatal("run with DynamoDB down: no error")
	}
	cp, _, _ := cps.Load(ctx, "stripe")
	if cp.Blocked != keys[0] || cp.Tries != 0 || !cp.At.Equal(start) {
		t.Errorf("after the outage: %+v, want blocked at the first event with no tries counted", cp)
	}
	dbDown = false

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
	reason := skippedReason(t, s, "stripe", poison)
	if !strings.Contains(reason, "dynamodb: refused") || strings.Contains(reason, "@") {
		t.Errorf("skipped record's reason = %q, want the failure without the address", reason)
	}
	// The run's metric line counts it (by provider), and an ERROR line
	// names it.
	lines, err := emf.ReadLines(strings.NewReader(metricLines.String()))
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

// The deployment names the Stripe event types (STRIPE_EVENT_TYPES), not
// the example shop: a business that handles charge.refunded gets a missed
// one back, and no checkout it does not handle.
func TestTheReconcilerListsTheTypesTheDeploymentNames(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	start := time.Now().Add(-20 * time.Minute)
	checkoutKeys, _ := stripeHas(t, s, 300, 2, func(i int) time.Time { return start.Add(time.Duration(i) * time.Minute) })
	refund := webhook.NewKey("stripe", "evt_recon_types_refund")
	body := fmt.Sprintf(`{"id":%q,"object":"event","type":"charge.refunded","created":%d,"livemode":false,"data":{"object":{"id":"ch_1"}}}`,
		refund.EventID(), start.Add(5*time.Minute).Unix())
	if err := s.Stripe.AddEvent([]byte(body)); err != nil {
		t.Fatal(err)
	}
	run := reconciler(t, s, map[string]string{"STRIPE_EVENTS_LOOKBACK": "1h", "STRIPE_EVENT_TYPES": "charge.refunded,invoice.paid"})
	sum, err := run(ctx)
	if err != nil {
		t.Fatalf("reconciler: %v\n%+v", err, sum)
	}
	if diff := cmp.Diff(map[webhook.Key]int{refund: 1}, queued(t, s)); diff != "" {
		t.Errorf("enqueued (-want +got):\n%s", diff)
	}
	for _, k := range checkoutKeys {
		if _, err := s.Inbox.Get(ctx, k); !errors.Is(err, inbox.ErrNotFound) {
			t.Errorf("%s, of a type the deployment does not name, was claimed: %v", k, err)
		}
	}
	for _, q := range s.Stripe.EventQueries() {
		if !strings.Contains(q, "charge.refunded") || strings.Contains(q, "checkout.session.completed") {
			t.Errorf("events listed with other types than the deployment's: %s", q)
		}
	}
}

package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/lambdafn/stripeapi"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/platform/metrics"
	"github.com/hookinbox/hookinbox/internal/platform/secrets"
	"github.com/hookinbox/hookinbox/internal/reconcile"
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
	sum, err := run(ctx, events.EventBridgeEvent{})
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
	if got := metrics.Sum(lines, metrics.Missed, map[string]string{metrics.DimProvider: "stripe"}, time.Time{}); got != 20 {
		t.Errorf("Missed = %v, want 20", got)
	}
	if got := metrics.Sum(lines, metrics.CheckpointLag, nil, time.Time{}); got < 4*60 || got > 6*60 {
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

	again, err := run(ctx, events.EventBridgeEvent{})
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
	source := stripeapi.NewEvents(secrets.Static(pipelinetest.StripeKey), s.StripeURL, nil)
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
	if _, err := s.Inbox.Get(ctx, keys[6]); !errors.Is(err, inbox.ErrNotFound) {
		t.Errorf("the failed event's claim: %v, want released (ErrNotFound)", err)
	}

	sum, err = h.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Missed != 1 || sum.Listed != 4 {
		t.Errorf("second run listed %d and claimed %d, want 4 and 1 (from the failed event on)", sum.Listed, sum.Missed)
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
	sum, err := run(ctx, events.EventBridgeEvent{})
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

	again, err := run(ctx, events.EventBridgeEvent{})
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

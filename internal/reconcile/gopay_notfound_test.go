package reconcile_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/providers/gopay"
	"github.com/hookinbox/hookinbox/internal/reconcile"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// notifyUnknown sends GoPay's notification of id, which GoPay's API does
// not know yet, and processes it until its claim ends IGNORED; it returns
// the claim.
func notifyUnknown(t *testing.T, s *pipelinetest.Pipeline, id int64) inbox.Item {
	t.Helper()
	key := webhook.NewKey("gopay", strconv.FormatInt(id, 10))
	if resp := s.Send(t, lambdalocal.GoPayNotification(strconv.FormatInt(id, 10))); resp.StatusCode != 200 {
		t.Fatalf("notification: %d %s", resp.StatusCode, resp.Body)
	}
	var it inbox.Item
	s.ProcessUntil(t, 30*time.Second, func() bool {
		var err error
		it, err = s.Inbox.Get(context.Background(), key)
		return err == nil && it.Status == inbox.Ignored
	})
	if it.Outcome != "not found at gopay" || s.GoPay.Fetches(id) != 2 {
		t.Fatalf("unknown payment: %+v after %d fetches; want IGNORED \"not found at gopay\" after 2", it, s.GoPay.Fetches(id))
	}
	return it
}

// waitUntil sleeps until at.
func waitUntil(at time.Time) { time.Sleep(time.Until(at) + 10*time.Millisecond) }

// GoPay notifies a payment its API does not know yet; the claim ends
// IGNORED for a short hold, during which repeats are duplicates and are
// not fetched. GoPay then knows it as PAID and notifies again: that
// notification is fetched and the order is marked paid once. A made-up
// id notified again and again after that is held off for the whole
// window, fetched once more at most.
func TestGoPayPaymentKnownLateReachesTheBusinessAtItsNextNotification(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.NewWith(t, pipelinetest.Options{ProcessorEnv: map[string]string{"NOT_FOUND_HOLD": "2s"}})
	const id = 3000008001
	key := webhook.NewKey("gopay", "3000008001")
	it := notifyUnknown(t, s, id)
	if hold := it.RenewAfter.Sub(it.ProcessedAt); hold <= 0 || hold > 3*time.Second {
		t.Fatalf("held %v after the first claim, want the short NOT_FOUND_HOLD", hold)
	}
	for range 3 {
		if resp := s.Send(t, lambdalocal.GoPayNotification("3000008001")); resp.StatusCode != 200 || resp.Body != `{"status":"duplicate"}` {
			t.Fatalf("repeat inside the hold: %d %s, want 200 duplicate", resp.StatusCode, resp.Body)
		}
	}

	s.GoPay.SetPayment(standin.GoPayPayment{ID: id, OrderNumber: "order-8001", State: "PAID", Amount: 4200, Currency: "CZK"})
	waitUntil(it.RenewAfter)
	if resp := s.Send(t, lambdalocal.GoPayNotification("3000008001")); resp.StatusCode != 200 {
		t.Fatalf("notification once GoPay knows it: %d %s", resp.StatusCode, resp.Body)
	}
	s.ProcessUntil(t, 30*time.Second, func() bool {
		it, err := s.Inbox.Get(ctx, key)
		return err == nil && it.Status == inbox.Done
	})
	want := []shop.Order{{Provider: "gopay", Payment: "3000008001", Reference: "order-8001", Status: shop.OrderPaid, Amount: 4200, Currency: "CZK"}}
	if diff := cmp.Diff(want, s.State(t).Orders); diff != "" {
		t.Errorf("orders (-want +got):\n%s", diff)
	}

	// A made-up id: its second claim is fetched once and held off for the
	// whole window.
	const madeUp = 3000008002
	first := notifyUnknown(t, s, madeUp)
	waitUntil(first.RenewAfter)
	if resp := s.Send(t, lambdalocal.GoPayNotification("3000008002")); resp.StatusCode != 200 {
		t.Fatalf("notification after the hold: %d %s", resp.StatusCode, resp.Body)
	}
	var second inbox.Item
	s.ProcessUntil(t, 30*time.Second, func() bool {
		var err error
		second, err = s.Inbox.Get(ctx, webhook.NewKey("gopay", "3000008002"))
		return err == nil && second.Status == inbox.Ignored && second.ReceivedAt.After(first.ReceivedAt)
	})
	if n := s.GoPay.Fetches(madeUp); n != 3 {
		t.Errorf("made-up id fetched %d times, want 3 (two at its first claim, one at its second)", n)
	}
	if hold := second.RenewAfter.Sub(second.ProcessedAt); hold < 14*time.Minute {
		t.Errorf("second claim held %v, want the 15-minute window", hold)
	}
	if got := len(pipelinetest.Peek(t, s.DLQ)); got != 0 {
		t.Errorf("%d messages parked, want none", got)
	}
}

// GoPay notifies a payment its API does not know yet, and sends nothing
// more once it knows it as PAID: the reconciler's sweep of unknown ids
// finds it, ends the hold of its IGNORED claim and hands it to the
// processor, which marks the order paid once. A made-up id is fetched by
// the sweep at most unknownSweeps times, never claimed, counted or
// alarmed.
func TestGoPayPaymentKnownLateIsFoundByTheReconciler(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	const id, madeUp = 3000009001, 3000009002
	key := webhook.NewKey("gopay", "3000009001")
	notifyUnknown(t, s, id)
	notifyUnknown(t, s, madeUp)
	s.GoPay.SetPayment(standin.GoPayPayment{ID: id, OrderNumber: "order-9001", State: "PAID", Amount: 990, Currency: "CZK"})

	run := reconciler(t, s, nil)
	sum, err := run(ctx)
	if err != nil {
		t.Fatalf("reconciler: %v\n%+v", err, sum)
	}
	if gp := providerRun(t, sum, "gopay"); gp.Listed != 2 || gp.Missed != 1 || gp.Skipped != 0 {
		t.Errorf("gopay source: %+v, want 2 fetched, 1 handed on, nothing skipped", gp)
	}
	if diff := cmp.Diff(map[webhook.Key]int{key: 1}, queued(t, s)); diff != "" {
		t.Errorf("enqueued (-want +got):\n%s", diff)
	}
	s.ProcessUntil(t, 30*time.Second, func() bool {
		it, err := s.Inbox.Get(ctx, key)
		return err == nil && it.Status == inbox.Done
	})
	want := []shop.Order{{Provider: "gopay", Payment: "3000009001", Reference: "order-9001", Status: shop.OrderPaid, Amount: 990, Currency: "CZK"}}
	if diff := cmp.Diff(want, s.State(t).Orders); diff != "" {
		t.Errorf("orders (-want +got):\n%s", diff)
	}

	fetched := s.GoPay.Fetches(id)
	for range unknownSweeps + 1 {
		sum, err := run(ctx)
		if err != nil {
			t.Fatalf("reconciler: %v\n%+v", err, sum)
		}
		if gp := providerRun(t, sum, "gopay"); gp.Missed != 0 || gp.Skipped != 0 {
			t.Errorf("gopay source later: %+v, want nothing handed on or skipped", gp)
		}
	}
	if n := s.GoPay.Fetches(id); n != fetched {
		t.Errorf("the paid payment was fetched %d more times by the sweep, want none", n-fetched)
	}
	if n := s.GoPay.Fetches(madeUp); n != 2+unknownSweeps {
		t.Errorf("made-up id fetched %d times, want 2 by the processor and %d by the sweep", n, unknownSweeps)
	}
	if it, err := s.Inbox.Get(ctx, webhook.NewKey("gopay", "3000009002")); err != nil || it.Status != inbox.Ignored {
		t.Errorf("made-up id: %+v, %v; want still IGNORED", it, err)
	}
}

// A flood of made-up ids, each sorting before a real payment GoPay knew
// only after it notified it, and going on at half the sweep's budget a
// run: the sweep takes the unknown ids in turn, so it finds the real one
// within a bounded number of runs, instead of fetching the first ids by
// sort key again and again.
func TestGoPayUnknownSweepFindsALatePaymentInAFlood(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	now := time.Now()
	watched, sweep := goPay(t, s, func() time.Time { return now }) // the processor's fetch records each 404
	next := int64(1_000_000)
	flood := func(n int) {
		for range n {
			if _, err := watched(ctx, strconv.FormatInt(next, 10)); !errors.Is(err, provider.ErrNotFound) {
				t.Fatalf("made-up id %d: %v, want not found", next, err)
			}
			next++
		}
	}
	const budget, real = 20, 9_000_000_001
	flood(5 * budget)
	if _, err := watched(ctx, strconv.FormatInt(real, 10)); !errors.Is(err, provider.ErrNotFound) {
		t.Fatalf("the real payment before GoPay knows it: %v", err)
	}
	s.GoPay.SetPayment(standin.GoPayPayment{ID: real, OrderNumber: "order-late", State: "PAID", Amount: 100, Currency: "CZK"})

	in := intake.New(intake.Config{FromProviderAPI: true}, s.Inbox, s.Events, nil)
	accept := func(ctx context.Context, ev webhook.Event) error { _, err := in.Accept(ctx, ev); return err }
	const runs = 15 // (5 budgets + a half a run) / (1 - a half) = 11 runs, and a margin
	for run := 1; run <= runs; run++ {
		flood(budget / 2)
		if _, err := sweep.Sweep(ctx, now, accept, func() bool { return false }); err != nil {
			t.Fatalf("sweep %d: %v", run, err)
		}
		if queued(t, s)[webhook.NewKey("gopay", strconv.FormatInt(real, 10))] == 1 {
			t.Logf("found at run %d, after %d fetches of it", run, s.GoPay.Fetches(real))
			return
		}
		now = now.Add(time.Minute)
	}
	t.Fatalf("the real payment was not found in %d runs of the sweep; fetched %d times", runs, s.GoPay.Fetches(real))
}

// unknownSweeps is how many times GoPay's sweep fetches an id GoPay did
// not know, at most (internal/providers/gopay).
const unknownSweeps = 3

// goPay returns GoPay's processor fetch and reconcile sweep on s, as the
// functions build them (the sweep's unknown-id budget is 20 a run), at
// the clock now (nil: the real one).
func goPay(t *testing.T, s *pipelinetest.Pipeline, now func() time.Time) (func(context.Context, string) ([]byte, error), provider.Sweeper) {
	t.Helper()
	vars := map[string]string{"GOPAY_CLIENT_ID": pipeline.GoPayClientID, "GOPAY_CLIENT_SECRET": pipeline.GoPayClientSecret,
		"GOPAY_API_URL": s.Endpoints["GOPAY_API_URL"]}
	env := &provider.Env{Getenv: func(k string) string { return vars[k] }, DynamoDB: s.DynamoDB, Table: s.Stack.Tables["InboxTable"],
		Inbox: reconcile.ProviderInbox(s.Inbox), Now: now}
	f, err := gopay.Provider{}.Processor(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	src, err := gopay.Provider{}.Reconciler(context.Background(), env)
	if err != nil || src.Sweep == nil {
		t.Fatalf("GoPay's source: %+v, %v", src, err)
	}
	return func(ctx context.Context, id string) ([]byte, error) { return f.Get(ctx, id, nil) }, src.Sweep
}

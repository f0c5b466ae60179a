package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/standin"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/webhook"
)

// A GoPay payment notified while AUTHORIZED, and later PAID without a
// notification, is fetched by the reconciler and its new state applied
// once; once final it is not fetched again.
func TestAGoPayPaymentPaidWithoutANotificationIsFetchedAndAppliedOnce(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	const id = "3000007001"
	key := webhook.NewKey("gopay", id)
	pay := standin.GoPayPayment{ID: 3000007001, OrderNumber: "order-7001", State: "AUTHORIZED", Amount: 2500, Currency: "CZK"}
	s.GoPay.SetPayment(pay)
	if resp := s.Send(t, lambdalocal.GoPayNotification(id)); resp.StatusCode != 200 {
		t.Fatalf("notification: %d %s", resp.StatusCode, resp.Body)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllFinal(t, []webhook.Key{key}) })
	if orders := s.State(t).Orders; len(orders) != 0 {
		t.Fatalf("an AUTHORIZED payment made orders %v", orders)
	}

	run := reconciler(t, s, nil)
	// Still AUTHORIZED: fetched, nothing handed on.
	sum, err := run(ctx)
	if err != nil {
		t.Fatalf("reconciler: %v\n%+v", err, sum)
	}
	if gp := providerRun(t, sum, "gopay"); gp.Listed != 1 || gp.Missed != 0 {
		t.Errorf("gopay source while AUTHORIZED: %+v, want 1 fetched, nothing missed", gp)
	}
	if got := queued(t, s); len(got) != 0 {
		t.Errorf("queued while the payment is unchanged: %v", got)
	}

	pay.State = "PAID" // and GoPay sends nothing
	s.GoPay.SetPayment(pay)
	sum, err = run(ctx)
	if err != nil {
		t.Fatalf("reconciler: %v\n%+v", err, sum)
	}
	if gp := providerRun(t, sum, "gopay"); gp.Listed != 1 || gp.Missed != 1 {
		t.Errorf("gopay source once PAID: %+v, want 1 fetched and missed", gp)
	}
	if diff := cmp.Diff(map[webhook.Key]int{key: 1}, queued(t, s)); diff != "" {
		t.Errorf("enqueued (-want +got):\n%s", diff)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool {
		it, err := s.Inbox.Get(ctx, key)
		return err == nil && it.Status == inbox.Done
	})
	want := []shop.Order{{Provider: "gopay", Payment: id, Reference: "order-7001", Status: shop.OrderPaid, Amount: 2500, Currency: "CZK"}}
	if diff := cmp.Diff(want, s.State(t).Orders); diff != "" {
		t.Errorf("orders (-want +got):\n%s", diff)
	}

	fetched := s.GoPay.Fetches(pay.ID)
	sum, err = run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if gp := providerRun(t, sum, "gopay"); gp.Listed != 0 || gp.Missed != 0 {
		t.Errorf("gopay source after PAID: %+v, want nothing fetched", gp)
	}
	if n := s.GoPay.Fetches(pay.ID); n != fetched {
		t.Errorf("a final payment was fetched again: %d fetches, was %d", n, fetched)
	}
	if got := queued(t, s); len(got) != 0 {
		t.Errorf("queued after the payment was final: %v", got)
	}
	if it, err := s.Inbox.Get(ctx, key); err != nil || it.Status != inbox.Done {
		t.Errorf("%s: %+v, %v", key, it, err)
	}
}

// A payment still not final after the watch's age is dropped, counted as
// skipped, and not fetched again.
func TestAGoPayPaymentNotFinalAfterItsMaxAgeIsDropped(t *testing.T) {
	ctx := context.Background()
	s := pipelinetest.New(t)
	const id = "3000007002"
	key := webhook.NewKey("gopay", id)
	s.GoPay.SetPayment(standin.GoPayPayment{ID: 3000007002, OrderNumber: "order-7002", State: "CREATED", Amount: 100, Currency: "CZK"})
	if resp := s.Send(t, lambdalocal.GoPayNotification(id)); resp.StatusCode != 200 {
		t.Fatalf("notification: %d %s", resp.StatusCode, resp.Body)
	}
	s.ProcessUntil(t, 20*time.Second, func() bool { return s.AllFinal(t, []webhook.Key{key}) })
	_, sweep := goPay(t, s, nil)
	in := intake.New(intake.Config{FromProviderAPI: true}, s.Inbox, s.Events, nil)
	accept := func(ctx context.Context, ev webhook.Event) error { _, err := in.Accept(ctx, ev); return err }
	fetched := s.GoPay.Fetches(3000007002)
	sw, err := sweep.Sweep(ctx, time.Now().Add(8*24*time.Hour), accept, func() bool { return false })
	if err != nil || sw.Skipped != 1 || sw.Fetched != 0 {
		t.Fatalf("sweep 8 days on: %+v, %v; want the payment dropped unfetched", sw, err)
	}
	sw, err = sweep.Sweep(ctx, time.Now(), accept, func() bool { return false })
	if err != nil || sw.Fetched != 0 || sw.Skipped != 0 {
		t.Errorf("next sweep: %+v, %v; want nothing watched", sw, err)
	}
	if n := s.GoPay.Fetches(3000007002); n != fetched {
		t.Errorf("fetched %d times after it was dropped, want %d", n, fetched)
	}
}

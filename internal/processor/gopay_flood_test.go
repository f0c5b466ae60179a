package processor_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/internal/inbox"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipelinetest"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/webhook"
)

// TestGoPayFloodDoesNotSlowOtherProviders measures, on the emulators with
// the functions as Lambda builds them, how long 20 Stripe checkouts take
// to reach DONE alone (before and after) and beside 500 made-up GoPay ids
// notified at GET /webhooks/gopay's throttle (template.yaml's
// GoPayThrottleBurst at once, then GoPayThrottleRate a second; the
// checkouts right behind the burst, and again halfway), and holds the
// ratio of the sums to at most 2. What keeps it there
// (docs/architecture.md, "Id-only notifications"): the route's own
// throttle bounds what the flood adds to the events queue, a made-up id
// costs the processor two short fetches and is never parked, and id-only
// messages run in a lane of their own in every batch.
func TestGoPayFloodDoesNotSlowOtherProviders(t *testing.T) {
	if testing.Short() {
		t.Skip("a 50-second load on the emulators")
	}
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rate, err := strconv.Atoi(tpl.Parameters["GoPayThrottleRate"].Default)
	if err != nil {
		t.Fatal(err)
	}
	burst, err := strconv.Atoi(tpl.Parameters["GoPayThrottleBurst"].Default)
	if err != nil {
		t.Fatal(err)
	}
	const flood, checkouts = 500, 20

	p := pipelinetest.New(t)
	ctx, stop := context.WithCancel(context.Background())
	var polling sync.WaitGroup
	polling.Add(1)
	go func() { defer polling.Done(); _ = p.Source.Run(ctx) }() // Lambda's event source mapping
	t.Cleanup(func() { stop(); polling.Wait() })

	// run delivers checkouts(prefix, n) and returns how long they took
	// to reach DONE.
	run := func(prefix string, n int) time.Duration {
		t.Helper()
		start := time.Now()
		keys := deliverCheckouts(t, p, prefix, n)
		for !p.AllIn(t, keys, inbox.Done) {
			if time.Since(start) > 2*time.Minute {
				t.Fatalf("%s: checkouts not DONE within 2 minutes", prefix)
			}
			time.Sleep(20 * time.Millisecond)
		}
		return time.Since(start)
	}
	run("warm", 5)
	alone := run("alone1", checkouts)

	ids := make([]webhook.Key, flood)
	for i := range ids {
		ids[i] = webhook.Key("gopay#" + strconv.Itoa(4_000_000_000+i))
	}
	burstSent, midway := make(chan struct{}), make(chan struct{})
	var flooding sync.WaitGroup
	flooding.Add(1)
	go func() {
		defer flooding.Done()
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for i, key := range ids {
			switch i {
			case burst:
				close(burstSent)
			case flood / 2:
				close(midway)
			}
			if i >= burst {
				<-tick.C
			}
			if resp := p.Send(t, lambdalocal.GoPayNotification(key.EventID())); resp.StatusCode != 200 {
				t.Errorf("made-up id %s: %d %s, want 200", key, resp.StatusCode, resp.Body)
			}
		}
	}()
	// Beside the flood twice: right behind its burst, and halfway.
	<-burstSent
	beside := run("beside1", checkouts)
	<-midway
	beside += run("beside2", checkouts)
	flooding.Wait()

	// Every made-up id ends IGNORED after two fetches (checked below),
	// none parked.
	deadline := time.Now().Add(time.Minute)
	for !p.AllIn(t, ids, inbox.Ignored) {
		if time.Now().After(deadline) {
			t.Fatal("the made-up ids did not all end IGNORED within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
	alone += run("alone2", checkouts)

	ratio := float64(beside) / float64(alone)
	t.Logf("2 x %d checkouts: %v alone, %v beside %d made-up GoPay ids at %d/s (burst %d): %.2fx",
		checkouts, alone.Round(time.Millisecond), beside.Round(time.Millisecond), flood, rate, burst, ratio)
	if ratio > 2 {
		t.Errorf("the checkouts took %.2fx as long beside the flood, want at most 2x", ratio)
	}
	fetches := 0
	for i := range flood {
		fetches += p.GoPay.Fetches(int64(4_000_000_000 + i))
	}
	if fetches != 2*flood {
		t.Errorf("%d fetches of %d made-up ids, want 2 each", fetches, flood)
	}
	if reasons := p.DLQReasons(t); len(reasons) != 0 {
		t.Errorf("parked: %v, want nothing (made-up ids must not raise the DLQ alarm)", reasons)
	}
}

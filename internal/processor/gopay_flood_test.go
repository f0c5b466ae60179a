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

// TestGoPayFloodDoesNotHoldUpOtherProviders: on the emulators with the
// functions as Lambda builds them, Stripe checkouts delivered beside made-up
// GoPay ids notified at GET /webhooks/gopay's throttle all end DONE at their
// first attempt, every made-up id ends IGNORED after exactly two fetches,
// and nothing is parked. What keeps it so (docs/architecture.md, "Id-only
// notifications"): the route's throttle bounds what the flood adds to the
// events queue, a made-up id costs two short fetches and is never parked,
// and id-only messages run in a lane of their own in every batch
// (TestIDOnlyMessagesRunInALaneOfTheirOwn holds their fetches and counts
// the others done). How long the checkouts take beside the flood is
// BenchmarkGoPayFlood's.
func TestGoPayFloodDoesNotHoldUpOtherProviders(t *testing.T) {
	if testing.Short() {
		t.Skip("a load on the emulators")
	}
	p := pipelinetest.New(t)
	run := gopayFlood(t, p, 100, 10)
	for _, key := range run.checkouts {
		it, err := p.Inbox.Get(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if it.Status != inbox.Done || it.Attempts != 1 {
			t.Errorf("%s: %s after %d attempts, want DONE at the first", key, it.Status, it.Attempts)
		}
	}
	p.EffectsOnce(t, run.checkouts)
	fetches := 0
	for _, key := range run.ids {
		id, _ := strconv.ParseInt(key.EventID(), 10, 64)
		fetches += p.GoPay.Fetches(id)
	}
	if fetches != 2*len(run.ids) {
		t.Errorf("%d fetches of %d made-up ids, want 2 each", fetches, len(run.ids))
	}
	if reasons := p.DLQReasons(t); len(reasons) != 0 {
		t.Errorf("parked: %v, want nothing (made-up ids must not raise the DLQ alarm)", reasons)
	}
}

// BenchmarkGoPayFlood reports how long 20 Stripe checkouts take to reach
// DONE beside 500 made-up GoPay ids notified at GET /webhooks/gopay's
// throttle (right behind its burst, and again halfway) against alone
// (before and after), as the ratio beside/alone; about 1 is the goal.
//
//	go test ./internal/processor/ -run '^$' -bench GoPayFlood -benchtime 1x
func BenchmarkGoPayFlood(b *testing.B) {
	for range b.N {
		p := pipelinetest.New(b)
		run := gopayFlood(b, p, 500, 20)
		b.ReportMetric(float64(run.beside)/float64(run.alone), "beside/alone")
		b.ReportMetric(run.alone.Seconds(), "alone-s")
		b.ReportMetric(run.beside.Seconds(), "beside-s")
	}
}

// floodRun is what gopayFlood delivered and how long the checkouts took.
type floodRun struct {
	checkouts, ids []webhook.Key
	alone, beside  time.Duration // two runs of the checkouts each
}

// gopayFlood delivers flood made-up GoPay ids at template.yaml's
// GoPayThrottleRate after a GoPayThrottleBurst at once, and twice n Stripe
// checkouts beside them (right behind the burst, and halfway) and alone
// (before and after). It returns once every checkout is DONE and every
// made-up id IGNORED.
func gopayFlood(t testing.TB, p *pipelinetest.Pipeline, flood, n int) floodRun {
	t.Helper()
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
	ctx, stop := context.WithCancel(context.Background())
	var polling sync.WaitGroup
	polling.Add(1)
	go func() { defer polling.Done(); _ = p.Source.Run(ctx) }() // Lambda's event source mapping
	defer func() { stop(); polling.Wait() }()

	var r floodRun
	// checkouts delivers n checkouts and returns how long they took to
	// reach DONE.
	checkouts := func(prefix string) time.Duration {
		start := time.Now()
		keys := deliverCheckouts(t, p, prefix, n)
		r.checkouts = append(r.checkouts, keys...)
		waitAll(t, p, keys, inbox.Done, prefix+" checkouts")
		return time.Since(start)
	}
	checkouts("warm")
	r.alone = checkouts("alone1")

	r.ids = make([]webhook.Key, flood)
	for i := range r.ids {
		r.ids[i] = webhook.Key("gopay#" + strconv.Itoa(4_000_000_000+i))
	}
	burstSent, midway := make(chan struct{}), make(chan struct{})
	var flooding sync.WaitGroup
	flooding.Add(1)
	go func() {
		defer flooding.Done()
		tick := time.NewTicker(time.Second / time.Duration(rate))
		defer tick.Stop()
		for i, key := range r.ids {
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
	<-burstSent
	r.beside = checkouts("beside1")
	<-midway
	r.beside += checkouts("beside2")
	flooding.Wait()
	waitAll(t, p, r.ids, inbox.Ignored, "made-up ids")
	r.alone += checkouts("alone2")
	return r
}

// waitAll waits, two minutes at most, until every key's item has status
// want.
func waitAll(t testing.TB, p *pipelinetest.Pipeline, keys []webhook.Key, want inbox.Status, what string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !p.AllIn(t, keys, want) {
		if time.Now().After(deadline) {
			t.Fatalf("%s not all %s within 2 minutes", what, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

package destination

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// BenchmarkSlowBesideFast delivers a batch of 10 events, all at once as
// the processor runs a batch with destinations, to a destination that
// answers in 2 s (concurrency 4) and one that answers at once. It reports
// how long the fast one waited for its deliveries (fast-max-ms: the
// slowest of the batch) and what became of the slow one's (slow-delivered,
// slow-busy: not tried, back later without counting an attempt).
//
//	go test -run '^$' -bench SlowBesideFast -benchtime 3x ./internal/destination/
func BenchmarkSlowBesideFast(b *testing.B) {
	const batch = 10
	var mu sync.Mutex
	var start time.Time
	var fastTook []time.Duration
	fast, _ := server(b, func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		fastTook = append(fastTook, time.Since(start))
		mu.Unlock()
	})
	slow, _ := server(b, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	slowCfg := httpConfig("slow", slow.URL)
	slowCfg.Concurrency = 4
	s, err := New([]Config{slowCfg, httpConfig("fast", fast.URL)}, Options{Secrets: testSecrets, LocalHTTP: true})
	if err != nil {
		b.Fatal(err)
	}
	h := s.Wrap(nil)
	var maxFast time.Duration
	var delivered, busy int
	for i := range b.N {
		fastTook = nil
		start = time.Now()
		var wg sync.WaitGroup
		var emu sync.Mutex
		for n := range batch {
			ev := webhook.Event{Provider: "stripe", ID: fmt.Sprintf("evt_%d_%d", i, n), Type: "invoice.paid", Raw: []byte(`{}`)}
			wg.Go(func() {
				err := h.Handle(context.Background(), ev, effects.NewMemoryLedger().For(ev.Key()))
				emu.Lock()
				defer emu.Unlock()
				switch {
				case err == nil:
					delivered++
				case errors.Is(err, webhook.ErrBusy):
					busy++
				}
			})
		}
		wg.Wait()
		maxFast = max(maxFast, slices.Max(fastTook))
	}
	b.ReportMetric(float64(maxFast.Milliseconds()), "fast-max-ms")
	b.ReportMetric(float64(delivered)/float64(b.N), "slow-delivered/batch")
	b.ReportMetric(float64(busy)/float64(b.N), "slow-busy/batch")
}

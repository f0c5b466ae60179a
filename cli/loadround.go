package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/webhook"
)

// loadDeliver sends d to url and returns the time to the answer; an
// answer other than 200 is an error.
func loadDeliver(ctx context.Context, client *http.Client, url string, d webhook.Request) (time.Duration, error) {
	req, err := lambdalocal.HTTPRequest(ctx, url, d)
	if err != nil {
		return 0, err
	}
	begin := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(begin)
	if resp.StatusCode != http.StatusOK {
		return took, fmt.Errorf("answered %s", resp.Status)
	}
	return took, nil
}

// roundResult is one round against one target.
type roundResult struct {
	sent, errors  int
	elapsed       time.Duration
	p50, p95, p99 time.Duration
	firstErr      error
	cpu           *cpuTimes // used over the round; nil when not measured
}

// cpuTimes is CPU time (user + system) of a target's processes.
type cpuTimes struct {
	function  time.Duration // the bootstraps
	rie       time.Duration // the aws-lambda-rie processes that run them
	emulators time.Duration // dynalite and local-aws-sqs, shared: counted over the target's rounds
	load      time.Duration // this process, the load generator
	machine   time.Duration // every CPU of the machine busy, kernel threads included
}

func (r roundResult) throughput() float64 { return float64(r.sent-r.errors) / r.elapsed.Seconds() }

func (r roundResult) p50ms() float64 { return ms(r.p50) }

func (r roundResult) p95ms() float64 { return ms(r.p95) }

func (r roundResult) p99ms() float64 { return ms(r.p99) }

// perDelivery is the CPU time of picks per answered delivery, in µs
// (NaN without CPU times).
func (r roundResult) perDelivery(pick func(cpuTimes) time.Duration) float64 {
	if r.cpu == nil || r.sent == 0 {
		return math.NaN()
	}
	return float64(pick(*r.cpu)) / float64(time.Microsecond) / float64(r.sent)
}

// cpuPerDelivery is the bootstraps' CPU time per answered delivery, in µs.
func (r roundResult) cpuPerDelivery() float64 {
	return r.perDelivery(func(c cpuTimes) time.Duration { return c.function })
}

// riePerDelivery is the RIE's.
func (r roundResult) riePerDelivery() float64 {
	return r.perDelivery(func(c cpuTimes) time.Duration { return c.rie })
}

// emulatorsPerDelivery is the emulators'.
func (r roundResult) emulatorsPerDelivery() float64 {
	return r.perDelivery(func(c cpuTimes) time.Duration { return c.emulators })
}

// loadPerDelivery is the load generator's.
func (r roundResult) loadPerDelivery() float64 {
	return r.perDelivery(func(c cpuTimes) time.Duration { return c.load })
}

// machinePerDelivery is the whole machine's: on a saturated machine, what
// throughput follows.
func (r roundResult) machinePerDelivery() float64 {
	return r.perDelivery(func(c cpuTimes) time.Duration { return c.machine })
}

func (r roundResult) String() string {
	s := fmt.Sprintf("%d deliveries in %s: %.1f/s, p50 %.2f ms, p95 %.2f ms, p99 %.2f ms",
		r.sent, r.elapsed.Round(time.Millisecond), r.throughput(), ms(r.p50), ms(r.p95), ms(r.p99))
	if r.cpu != nil {
		s += fmt.Sprintf(", CPU %.0f µs/delivery (RIE %.0f, emulators %.0f, load %.0f; machine %.0f)", r.cpuPerDelivery(), r.riePerDelivery(),
			r.emulatorsPerDelivery(), r.loadPerDelivery(), r.machinePerDelivery())
	}
	if r.errors > 0 {
		s += fmt.Sprintf(", %d errors (first: %v)", r.errors, r.firstErr)
	}
	return s
}

// runRound sends ds to url, at f.rate or from f.concurrency senders, until
// they are all sent or, without --count, f.duration has passed.
func runRound(ctx context.Context, client *http.Client, url string, ds []webhook.Request, f loadFlags) (roundResult, error) {
	if f.count == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	rec := &roundRecorder{ctx: ctx}
	next := make(chan loadJob)
	var wg sync.WaitGroup
	for i := 0; i < f.concurrency; i++ {
		wg.Go(func() {
			for j := range next {
				took, err := loadDeliver(ctx, client, url, j.d)
				if !j.due.IsZero() {
					took = time.Since(j.due)
				}
				rec.record(took, err)
			}
		})
	}
	begin := time.Now()
	feed(ctx, next, ds, f.rate, begin)
	close(next)
	wg.Wait()
	res := rec.res
	res.elapsed = time.Since(begin)
	if f.count == 0 && res.elapsed > f.duration {
		res.elapsed = f.duration
	}
	if len(rec.latencies) == 0 {
		return res, fmt.Errorf("no delivery answered: %v", res.firstErr)
	}
	slices.Sort(rec.latencies)
	res.p50, res.p95, res.p99 = percentile(rec.latencies, 50), percentile(rec.latencies, 95), percentile(rec.latencies, 99)
	return res, nil
}

// loadJob is one delivery of a round, due at a time in rate mode.
type loadJob struct {
	d   webhook.Request
	due time.Time
}

// feed hands ds to the senders on next until ctx ends. In rate mode
// (rate > 0) each delivery is due at begin + i/rate and its latency counts
// from then, so a target that falls behind is charged for the wait (no
// coordinated omission).
func feed(ctx context.Context, next chan<- loadJob, ds []webhook.Request, rate float64, begin time.Time) {
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(time.Second) / rate)
	}
	for i, d := range ds {
		j := loadJob{d: d}
		if interval > 0 {
			j.due = begin.Add(time.Duration(i) * interval)
			if wait := time.Until(j.due); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return
				}
			}
		}
		select {
		case next <- j:
		case <-ctx.Done():
			return
		}
	}
}

// roundRecorder counts a round's answers, from every sender.
type roundRecorder struct {
	ctx       context.Context // the round's: a delivery it cut off is not counted
	mu        sync.Mutex
	res       roundResult
	latencies []time.Duration
}

// record counts one delivery that took took and failed with err.
func (r *roundRecorder) record(took time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		r.res.sent++
		r.latencies = append(r.latencies, took)
		return
	}
	if r.ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		return // cut off by the end of the round
	}
	r.res.sent++
	r.res.errors++
	if r.res.firstErr == nil {
		r.res.firstErr = err
	}
}

// percentile returns the p-th percentile of sorted (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

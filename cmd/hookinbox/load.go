package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/floor"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/verify/verifytest"
)

type loadFlags struct {
	url, secret, stateFile string
	rate                   float64
	concurrency            int
	duration               time.Duration
	count                  int
	dup                    float64
	size                   int
	rounds                 int
	floor                  bool
}

func cmdLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f loadFlags
	fs := newFlagSet("load", "[flags]", `
Drives the local stack's receiver with signed Stripe deliveries and, in the
same run, a floor program (internal/local/floor: one conditional PutItem and one
SendMessage per request, nothing else) on the same emulators, round by
round (receiver, floor, receiver, floor, ...), and prints the throughput
and the p50/p95/p99 acknowledgement latency of each, and their ratios.

Load is either a fixed rate (--rate, requests per second) or a fixed
concurrency (--concurrency senders, each sending its next loadRequest when the
last is answered), for --duration or --count deliveries per round. A share
of deliveries (--dup) repeats an earlier loadRequest of the round, as a
retrying provider does. Every URL must be on the loopback interface.

The floor serves in this process behind the same HTTP API emulation the
local stack uses, on tables and a queue of its own that it deletes at the
end; the receiver is the running stack's (hookinbox dev, in-process or
--rie). Timings depend on the machine: compare the ratios, measured side
by side, not the absolute figures.

Examples:
  hookinbox load --concurrency 8 --count 500
  hookinbox load --rate 200 --duration 10s --dup 0.2`)
	fs.StringVar(&f.url, "url", "", "webhook URL (default: the running stack's)")
	fs.StringVar(&f.secret, "secret", "", "signing secret (default: the running stack's)")
	fs.StringVar(&f.stateFile, "state-file", defaultStateFile(), "state file of the running stack")
	fs.Float64Var(&f.rate, "rate", 0, "requests per second (0: fixed concurrency instead)")
	fs.IntVar(&f.concurrency, "concurrency", 8, "concurrent senders (with --rate: the most requests in flight)")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "length of each round (unless --count)")
	fs.IntVar(&f.count, "count", 0, "deliveries per round (instead of --duration)")
	fs.Float64Var(&f.dup, "dup", 0.1, "share of deliveries that repeat an earlier one (0 to 1)")
	fs.IntVar(&f.size, "size", 0, "payload bytes (0: a realistic checkout, about 2.9 KB)")
	fs.IntVar(&f.rounds, "rounds", 2, "rounds per target")
	fs.BoolVar(&f.floor, "floor", true, "drive the floor program too, and print the ratios")
	if _, err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	switch {
	case f.rate < 0 || f.concurrency < 1 || f.rounds < 1 || f.count < 0 || f.size < 0:
		return usagef("--rate, --count and --size must be at least 0, --concurrency and --rounds at least 1")
	case f.dup < 0 || f.dup >= 1:
		return usagef("--dup must be in [0, 1)")
	case f.count == 0 && f.duration <= 0:
		return usagef("give --count or a positive --duration")
	case f.count == 0 && f.duration > 10*time.Minute:
		return usagef("--duration is at most 10m")
	case f.count > 1_000_000:
		return usagef("--count is at most 1000000")
	}

	st, err := loadState(f.stateFile)
	if err != nil && (f.url == "" || f.secret == "" || f.floor) {
		return err
	}
	if f.url == "" {
		f.url = st.WebhookURL
	}
	if f.secret == "" {
		f.secret = st.StripeWebhookSecret
	}
	if err := requireLoopback(f.url); err != nil {
		return err
	}

	targets := []loadTarget{{name: "receiver", url: f.url}}
	if f.floor {
		floorURL, stop, err := startFloor(ctx, st)
		if err != nil {
			return err
		}
		defer stop()
		targets = append(targets, loadTarget{name: "floor", url: floorURL})
	}

	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute},
	}
	// Warm both targets up: connections, clients, a first claim.
	for _, tg := range targets {
		for _, d := range makeDeliveries(5, 0, f.size, f.secret) {
			if _, err := loadDeliver(ctx, client, tg.url, d); err != nil {
				return fmt.Errorf("%s at %s: %w", tg.name, tg.url, err)
			}
		}
	}

	mode := fmt.Sprintf("fixed concurrency %d", f.concurrency)
	if f.rate > 0 {
		mode = fmt.Sprintf("fixed rate %g/s, at most %d in flight", f.rate, f.concurrency)
	}
	bound := fmt.Sprintf("%s per round", f.duration)
	if f.count > 0 {
		bound = fmt.Sprintf("%d deliveries per round", f.count)
	}
	fmt.Fprintf(stdout, "hookinbox load: %s, %s, %d rounds per target, %.0f%% duplicates\n", mode, bound, f.rounds, f.dup*100)
	for i := 0; i < f.rounds; i++ {
		for j := range targets {
			n := f.count
			if n == 0 {
				n = int(math.Max(f.rate, 1000) * f.duration.Seconds()) // enough for the duration
			}
			res, err := runRound(ctx, client, targets[j].url, makeDeliveries(n, f.dup, f.size, f.secret), f)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", targets[j].name, i+1, err)
			}
			targets[j].rounds = append(targets[j].rounds, res)
			fmt.Fprintf(stdout, "  %-8s round %d: %s\n", targets[j].name, i+1, res)
		}
	}
	fmt.Fprintln(stdout)
	fmt.Fprintf(stdout, "%-8s %12s %9s %9s %9s %8s\n", "target", "deliveries/s", "p50 ms", "p95 ms", "p99 ms", "errors")
	for _, tg := range targets {
		fmt.Fprintf(stdout, "%-8s %12.1f %9.2f %9.2f %9.2f %8d\n", tg.name, tg.median(roundResult.throughput),
			tg.median(func(r roundResult) float64 { return ms(r.p50) }), tg.median(func(r roundResult) float64 { return ms(r.p95) }),
			tg.median(func(r roundResult) float64 { return ms(r.p99) }), tg.errors())
	}
	if len(targets) == 2 {
		r, fl := targets[0], targets[1]
		fmt.Fprintf(stdout, "\nreceiver / floor (medians of the rounds): throughput %.2f×, p50 %.2f×, p95 %.2f×, p99 %.2f×\n",
			r.median(roundResult.throughput)/fl.median(roundResult.throughput),
			r.median(func(x roundResult) float64 { return ms(x.p50) })/fl.median(func(x roundResult) float64 { return ms(x.p50) }),
			r.median(func(x roundResult) float64 { return ms(x.p95) })/fl.median(func(x roundResult) float64 { return ms(x.p95) }),
			r.median(func(x roundResult) float64 { return ms(x.p99) })/fl.median(func(x roundResult) float64 { return ms(x.p99) }))
	}
	for _, tg := range targets {
		if tg.errors() > 0 {
			return fmt.Errorf("%s answered %d deliveries with an error", tg.name, tg.errors())
		}
	}
	return nil
}

// requireLoopback refuses a URL whose host is not a loopback address.
func requireLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return usagef("--url %q is not a URL", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return usagef("--url %s: load sends only to the loopback interface (127.0.0.1, ::1, localhost)", raw)
	}
	return nil
}

// startFloor serves the floor program on a free loopback port, on a
// stack of its own (tables and queues from template.yaml) on the running
// stack's emulators, and returns its webhook URL and how to stop it.
func startFloor(ctx context.Context, st *devState) (string, func(), error) {
	emu := &devstack.Emulators{DynamoDBURL: st.Endpoints["AWS_ENDPOINT_URL_DYNAMODB"], SQSURL: st.Endpoints["AWS_ENDPOINT_URL_SQS"], External: true}
	if err := requireLoopback(emu.DynamoDBURL); err != nil {
		return "", nil, fmt.Errorf("the stack's DynamoDB endpoint: %w", err)
	}
	if err := requireLoopback(emu.SQSURL); err != nil {
		return "", nil, fmt.Errorf("the stack's SQS endpoint: %w", err)
	}
	tpl, err := samtemplate.Load(filepath.Join(st.Root, "template.yaml"))
	if err != nil {
		return "", nil, err
	}
	stack, err := emu.CreateStack(ctx, tpl, "floor"+randomHex(4))
	if err != nil {
		return "", nil, fmt.Errorf("create the floor's tables and queues: %w", err)
	}
	h := floor.New(emu.DynamoDB(), emu.SQS(), stack.Tables["InboxTable"], stack.Queues["EventsQueue"].URL)
	api := &lambdalocal.HTTPAPI{Routes: []lambdalocal.Route{{Method: "POST", Path: "/webhooks/{provider}", Function: lambdalocal.InProcess(h.Handle)}}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = stack.Delete(context.Background())
		return "", nil, err
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop := func() {
		_ = srv.Close()
		_ = stack.Delete(context.Background())
	}
	return "http://" + ln.Addr().String() + "/webhooks/stripe", stop, nil
}

// loadRequest is one signed delivery.
type loadRequest struct {
	body      []byte
	signature string
}

// makeDeliveries returns n deliveries of fresh events, a share dup of them
// repeating an earlier one of the list, all signed now.
func makeDeliveries(n int, dup float64, size int, secret string) []loadRequest {
	now := time.Now()
	prefix := randomHex(4)
	out := make([]loadRequest, 0, n)
	var opts []verifytest.Option
	if size > 0 {
		opts = append(opts, verifytest.WithSize(size))
	}
	for i := 0; i < n; i++ {
		if len(out) > 0 && math.Floor(float64(i+1)*dup) > math.Floor(float64(i)*dup) { // spread evenly
			out = append(out, out[(i*7919)%len(out)])
			continue
		}
		body := verifytest.StripeEvent("checkout.session.completed", fmt.Sprintf("evt_load%s%07d", prefix, i), now, opts...)
		out = append(out, loadRequest{body: body, signature: verifytest.SignStripe(body, now, secret)})
	}
	return out
}

// loadDeliver POSTs d and returns the time to the answer; an answer other than
// 200 is an error.
func loadDeliver(ctx context.Context, client *http.Client, url string, d loadRequest) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(d.body)))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", d.signature)
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
}

func (r roundResult) throughput() float64 { return float64(r.sent-r.errors) / r.elapsed.Seconds() }

func (r roundResult) String() string {
	s := fmt.Sprintf("%d deliveries in %s: %.1f/s, p50 %.2f ms, p95 %.2f ms, p99 %.2f ms",
		r.sent, r.elapsed.Round(time.Millisecond), r.throughput(), ms(r.p50), ms(r.p95), ms(r.p99))
	if r.errors > 0 {
		s += fmt.Sprintf(", %d errors (first: %v)", r.errors, r.firstErr)
	}
	return s
}

// runRound sends ds to url, at f.rate or from f.concurrency senders, until
// they are all sent or, without --count, f.duration has passed.
func runRound(ctx context.Context, client *http.Client, url string, ds []loadRequest, f loadFlags) (roundResult, error) {
	if f.count == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	var (
		mu        sync.Mutex
		latencies []time.Duration
		res       roundResult
	)
	record := func(took time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		res.sent++
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
				res.sent-- // cut off by the end of the round
				return
			}
			res.errors++
			if res.firstErr == nil {
				res.firstErr = err
			}
			return
		}
		latencies = append(latencies, took)
	}
	next := make(chan loadRequest)
	var wg sync.WaitGroup
	for i := 0; i < f.concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range next {
				record(loadDeliver(ctx, client, url, d))
			}
		}()
	}
	begin := time.Now()
	var tick *time.Ticker
	if f.rate > 0 {
		tick = time.NewTicker(time.Duration(float64(time.Second) / f.rate))
		defer tick.Stop()
	}
feed:
	for _, d := range ds {
		if tick != nil {
			select {
			case <-tick.C:
			case <-ctx.Done():
				break feed
			}
		}
		select {
		case next <- d:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	res.elapsed = time.Since(begin)
	if f.count == 0 && res.elapsed > f.duration {
		res.elapsed = f.duration
	}
	if len(latencies) == 0 {
		return res, fmt.Errorf("no loadRequest answered: %v", res.firstErr)
	}
	slices.Sort(latencies)
	res.p50, res.p95, res.p99 = percentile(latencies, 50), percentile(latencies, 95), percentile(latencies, 99)
	return res, nil
}

// percentile returns the p-th percentile of sorted (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// loadTarget is a URL driven round after round.
type loadTarget struct {
	name, url string
	rounds    []roundResult
}

// median returns the median over the target's rounds of v.
func (t loadTarget) median(v func(roundResult) float64) float64 {
	xs := make([]float64, len(t.rounds))
	for i, r := range t.rounds {
		xs[i] = v(r)
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func (t loadTarget) errors() int {
	n := 0
	for _, r := range t.rounds {
		n += r.errors
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

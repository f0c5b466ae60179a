package cli

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
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/floor"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// defaultLoadWarmup is --warmup's default. With 100 or 1 000 warm-up
// deliveries, the first round's emulators took 1.1-2.5 times the CPU a
// delivery of the later rounds (median 1.7, over 33 runs); after 4 000 to
// each target, 0.94-1.35 times (median 1.05, over 15).
const defaultLoadWarmup = 4000

type loadFlags struct {
	provider               string
	url, secret, stateFile string
	benchstat              string
	stack                  bool
	copies, warmup         int
	rate                   float64
	concurrency            int
	duration               time.Duration
	count                  int
	dup                    float64
	size                   int
	rounds                 int
	floor                  bool
	null                   bool
	runs                   int
	env                    []string // --env NAME=VALUE, in order
}

func cmdLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f loadFlags
	fs := newFlagSet("load", "[flags]", `
Drives hookinbox's receiver with signed deliveries of one provider
(--provider) and, in the same run, a floor program (internal/local/floor:
plain aws-sdk-go-v2, one conditional PutItem of the body as received, with
the two attributes that put it in the inbox table's pending index as a
claim is, and one SendMessage per request, nothing else) on the same
emulators, and prints
the throughput, the p50/p95/p99 acknowledgement latency and the CPU time
per delivery of each, and their ratios.

By default it runs everything itself, so the two are measured alike: it
starts dynalite and local-aws-sqs of its own, builds the receiver's
bootstrap (make build-ReceiverFunction, for this host) and the floor's
(cmd/floor, with the same flags), runs --copies of each under
aws-lambda-rie behind the same HTTP API emulation, each on a stack of its
own (tables and queues from template.yaml) on the same emulators, and stops
it all at the end. The functions' output (their log lines) goes to a file
in its temporary directory, as Lambda's platform ships it, not through
this process, which would spend CPU copying it. Nothing consumes the
queues. CPU per delivery is the
bootstrap processes' user + system time over the round (from /proc, in
10 ms ticks) divided by the deliveries answered; the RIE's is printed
beside it and left out of the ratio (it is the same program for both),
and so is the emulators' (dynalite and local-aws-sqs, one node process
both targets share, counted over each target's own rounds): on a small
machine they take CPU from the functions, so what a target's requests
cost them shows in its throughput.

With --stack it drives the running stack's receiver instead (hookinbox
dev, in-process or --rie, with its processor running beside it) and
serves the floor in this process on that stack's emulators: handy to load
a dev stack, but the two do not run alike, so the ratios are only a hint
and CPU is not measured.

Load is either a fixed rate (--rate, requests per second) or a fixed
concurrency (--concurrency senders, each sending its next delivery when the
last is answered), for --duration or --count deliveries per round. A share
of deliveries (--dup) repeats an earlier delivery of the round, as a
retrying provider does. --warmup deliveries go to each target first and are
not counted: with its default of 4000 the shared emulators (node) have
settled before the first round, which otherwise costs them 1.1-2.5 times
the CPU a delivery of the later rounds and falls on the first-named
target alone. Rounds alternate (receiver, floor, then floor, receiver, ...)
so that the machine's own noise falls on both; the summary is the median
over the rounds. With --runs, the floor opens every second run: a run's
first round is more often than not its slowest. Every URL must be on the loopback interface.

Timings depend on the machine and on what else runs on it: compare the
ratios, measured side by side, not the absolute figures. Each run also
carries an offset of its own (where its processes land on the machine),
which more rounds do not average out: --runs N repeats the whole run, new
emulators and bootstraps each time, and ends with the median and range of
the runs' ratios, the figure to quote. --null runs the
floor's bootstrap in both places (the first named "floor-a"): the two are
the same program, so how far their ratios stray from 1× is the spread
any one run's ratios carry on this machine.

Examples:
  hookinbox load --concurrency 4 --count 1000 --rounds 5
  hookinbox load --runs 3 --count 1000 --rounds 3
  hookinbox load --rate 150 --duration 10s --dup 0.2
  hookinbox load --stack --concurrency 8 --count 500
  hookinbox load --null --env GOMAXPROCS=1   # both bootstraps on one P
  hookinbox load --provider `+providers().Names()[1]+` --count 1000`)
	fs.StringVar(&f.provider, "provider", providers().Names()[0], "the provider whose deliveries load sends, its sample events in testdata/<provider>/ with fresh ids: "+strings.Join(providers().Names(), ", "))
	fs.BoolVar(&f.stack, "stack", false, "drive the running stack's receiver (see --state-file) instead of bootstraps started here")
	fs.IntVar(&f.copies, "copies", 2, "copies of each bootstrap under aws-lambda-rie (each runs one invocation at a time)")
	fs.IntVar(&f.warmup, "warmup", defaultLoadWarmup, "deliveries to each target before the rounds, not counted")
	fs.StringVar(&f.url, "url", "", "with --stack: webhook URL (default: the running stack's)")
	fs.StringVar(&f.secret, "secret", "", "the provider's signing secret(s), comma-separated (default: the running stack's, or the local ones)")
	fs.StringVar(&f.stateFile, "state-file", defaultStateFile(), "with --stack: state file of the running stack")
	fs.Float64Var(&f.rate, "rate", 0, "requests per second (0: fixed concurrency instead)")
	fs.IntVar(&f.concurrency, "concurrency", 4, "concurrent senders (with --rate: the most requests in flight)")
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "length of each round (unless --count)")
	fs.IntVar(&f.count, "count", 0, "deliveries per round (instead of --duration)")
	fs.Float64Var(&f.dup, "dup", 0.1, "share of deliveries that repeat an earlier one (0 to 1)")
	fs.IntVar(&f.size, "size", 0, "payload bytes: the provider's largest sample event under size, padded to size (0: its largest up to 4 KiB, unpadded)")
	fs.IntVar(&f.rounds, "rounds", 5, "rounds per target")
	fs.IntVar(&f.runs, "runs", 1, "whole runs, each with emulators and bootstraps of its own; with more than one, the median of the runs' ratios too")
	fs.BoolVar(&f.floor, "floor", true, "drive the floor program too, and print the ratios")
	fs.BoolVar(&f.null, "null", false, "a null run: drive the floor's bootstrap in the receiver's place too, so the ratios show the harness's own spread on this machine")
	fs.Func("env", "NAME=VALUE set in both bootstraps' environment, over the template's (repeatable; e.g. GOMAXPROCS=1, GODEBUG=gctrace=1)", func(v string) error {
		if name, _, ok := strings.Cut(v, "="); !ok || name == "" || strings.ContainsAny(name, " \t") {
			return fmt.Errorf("want NAME=VALUE, got %q", v)
		}
		f.env = append(f.env, v)
		return nil
	})
	fs.StringVar(&f.benchstat, "benchstat", "", "also write every round to this file as Go benchmark lines (BenchmarkLoad/target=...), for benchstat")
	if _, err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	switch {
	case f.rate < 0 || f.concurrency < 1 || f.rounds < 1 || f.count < 0 || f.size < 0 || f.warmup < 0:
		return usagef("--rate, --count, --size and --warmup must be at least 0, --concurrency and --rounds at least 1")
	case f.copies < 1 || f.copies > 16:
		return usagef("--copies must be in [1, 16]")
	case f.dup < 0 || f.dup >= 1:
		return usagef("--dup must be in [0, 1)")
	case f.count == 0 && f.duration <= 0:
		return usagef("give --count or a positive --duration")
	case f.count == 0 && f.duration > 10*time.Minute:
		return usagef("--duration is at most 10m")
	case f.count > 1_000_000:
		return usagef("--count is at most 1000000")
	case f.url != "" && !f.stack:
		return usagef("--url needs --stack (without it, load starts the receiver itself)")
	case f.runs < 1 || f.runs > 20:
		return usagef("--runs must be in [1, 20]")
	case f.stack && f.runs > 1:
		return usagef("--runs starts everything again for each run: it takes no --stack")
	case f.stack && len(f.env) > 0:
		return usagef("--env sets the environment of the bootstraps load starts: it takes no --stack")
	case f.null && (f.stack || !f.floor):
		return usagef("--null compares the floor with itself: it takes neither --stack nor --floor=false")
	}
	p, ok := providers().Lookup(f.provider)
	switch {
	case !ok:
		return usagef("unknown --provider %q: load knows %s", f.provider, strings.Join(providers().Names(), ", "))
	case f.size > 0 && p.Webhook().IDOnly:
		return usagef("--size: a %s notification carries only an id", p.Name())
	}

	var all []*loadTarget // every run's targets, for --benchstat
	var ratios []loadRatios
	for run := 1; run <= f.runs; run++ {
		if f.runs > 1 {
			fmt.Fprintf(stdout, "== run %d of %d\n", run, f.runs)
		}
		targets, err := loadRun(ctx, f, p, run%2 == 0, stdout, stderr)
		if err != nil {
			return err
		}
		all = append(all, targets...)
		if len(targets) == 2 {
			ratios = append(ratios, ratiosOf(targets[0], targets[1]))
		}
		if f.runs > 1 {
			fmt.Fprintln(stdout)
		}
	}
	if f.runs > 1 && len(ratios) > 0 {
		printRunsSummary(stdout, all[0].name, all[1].name, ratios)
	}
	if f.benchstat != "" {
		if err := writeBenchstat(f.benchstat, f, all); err != nil {
			return err
		}
	}
	for _, tg := range all {
		if tg.errors() > 0 {
			return fmt.Errorf("%s answered %d deliveries with an error", tg.name, tg.errors())
		}
	}
	return nil
}

// loadRun starts the targets (or finds the running stack's), warms them
// up and runs f.rounds alternating rounds, printing each round and the
// run's summary; it stops what it started before it returns. The
// receiver goes first, or the floor when floorFirst: the first round of a
// run is its slowest more often than not, so
// --runs lets the two open the runs in turn. It returns the receiver
// first either way.
func loadRun(ctx context.Context, f loadFlags, p provider.Provider, floorFirst bool, stdout, stderr io.Writer) ([]*loadTarget, error) {
	var targets []*loadTarget
	root := ""
	if f.stack {
		ts, st, stop, err := stackTargets(ctx, &f, p)
		if err != nil {
			return nil, err
		}
		defer stop()
		targets = ts
		if st != nil {
			root = st.Root
		}
	} else {
		if f.secret == "" {
			f.secret = pipeline.LocalEnv("")[p.Webhook().SecretEnv]
		}
		fmt.Fprintf(stderr, "hookinbox load: starting the emulators and %d copies of each bootstrap under aws-lambda-rie (the first build takes a minute)\n", f.copies)
		ts, stop, err := bootstrapTargets(ctx, f, p)
		if err != nil {
			return nil, err
		}
		defer stop()
		targets = ts
	}
	if root == "" {
		var err error
		if root, err = devstack.RepoRoot(""); err != nil {
			return nil, err
		}
	}
	src, err := newLoadSource(root, senders()[p.Name()], f.size, envconfig.Split(f.secret))
	if err != nil {
		return nil, err
	}

	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute},
	}
	opening := targets
	if floorFirst && len(targets) == 2 {
		opening = []*loadTarget{targets[1], targets[0]}
	}
	// Warm every target up, uncounted: connections, clients, every copy
	// started, a first claim.
	for _, tg := range opening {
		warm := f
		warm.count, warm.rate = max(f.warmup, 2*f.copies), 0
		ds, err := src.deliveries(warm.count, f.dup)
		if err != nil {
			return nil, err
		}
		if _, err := runRound(ctx, client, tg.url, ds, warm); err != nil {
			return nil, fmt.Errorf("%s at %s: warm-up: %w", tg.name, tg.url, err)
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
	where := fmt.Sprintf("%d copies of each bootstrap under aws-lambda-rie", f.copies)
	if f.stack {
		where = "the running stack's receiver, the floor in this process"
	}
	fmt.Fprintf(stdout, "hookinbox load: %s; %s, %s, %d rounds per target (alternating, %s first), %d warm-up deliveries each, %.0f%% duplicates\n",
		where, mode, bound, f.rounds, opening[0].name, f.warmup, f.dup*100)
	for i := 0; i < f.rounds; i++ {
		order := opening
		if i%2 == 1 && len(targets) == 2 {
			order = []*loadTarget{opening[1], opening[0]}
		}
		for _, tg := range order {
			n := f.count
			if n == 0 {
				n = int(math.Max(f.rate, 1000) * f.duration.Seconds()) // enough for the duration
			}
			ds, err := src.deliveries(n, f.dup)
			if err != nil {
				return nil, err
			}
			var before cpuTimes
			if tg.cpu != nil {
				if before, err = tg.cpu(); err != nil {
					return nil, fmt.Errorf("%s: %w", tg.name, err)
				}
			}
			res, err := runRound(ctx, client, tg.url, ds, f)
			if err != nil {
				return nil, fmt.Errorf("%s round %d: %w", tg.name, i+1, err)
			}
			if tg.cpu != nil {
				after, err := tg.cpu()
				if err != nil {
					return nil, fmt.Errorf("%s: %w", tg.name, err)
				}
				res.cpu = &cpuTimes{
					function: after.function - before.function, rie: after.rie - before.rie, emulators: after.emulators - before.emulators,
					load: after.load - before.load, machine: after.machine - before.machine,
				}
			}
			tg.rounds = append(tg.rounds, res)
			fmt.Fprintf(stdout, "  %-8s round %d: %s\n", tg.name, i+1, res)
		}
	}
	printLoadSummary(stdout, targets)
	return targets, nil
}

// loadRatios are one run's ratios of the first target's medians over the
// second's.
type loadRatios struct{ throughput, p99, cpu float64 }

func ratiosOf(r, fl *loadTarget) loadRatios {
	lr := loadRatios{throughput: ratioOf(r, fl, roundResult.throughput), p99: ratioOf(r, fl, roundResult.p99ms)}
	if r.cpu != nil && fl.cpu != nil {
		lr.cpu = ratioOf(r, fl, roundResult.cpuPerDelivery)
	}
	return lr
}

// ratioOf is r's median of v over fl's.
func ratioOf(r, fl *loadTarget, v func(roundResult) float64) float64 {
	return r.median(v) / fl.median(v)
}

// printRunsSummary prints, over several runs, the median and the range of
// each run's ratios: each run starts its own emulators and bootstraps and
// carries an offset of its own, which only more runs average out.
func printRunsSummary(w io.Writer, first, second string, runs []loadRatios) {
	line := func(v func(loadRatios) float64) string {
		xs := make([]float64, len(runs))
		for i, r := range runs {
			xs[i] = v(r)
		}
		m := median(xs) // sorts xs
		return fmt.Sprintf("median %.2f× (%.2f-%.2f×)", m, xs[0], xs[len(xs)-1])
	}
	fmt.Fprintf(w, "%s / %s over %d runs (each run's ratio of medians): throughput %s, p99 %s",
		first, second, len(runs), line(func(r loadRatios) float64 { return r.throughput }), line(func(r loadRatios) float64 { return r.p99 }))
	if runs[0].cpu > 0 {
		fmt.Fprintf(w, ", CPU per delivery %s", line(func(r loadRatios) float64 { return r.cpu }))
	}
	fmt.Fprintln(w)
}

// printLoadSummary prints each target's medians over its rounds and, for
// two targets, the first's over the second's.
func printLoadSummary(w io.Writer, targets []*loadTarget) {
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-8s %12s %9s %9s %9s %12s %12s %12s %13s %8s\n", "target", "deliveries/s", "p50 ms", "p95 ms", "p99 ms", "CPU µs/dlv", "RIE µs/dlv", "emu µs/dlv", "machine µs/dlv", "errors")
	for _, tg := range targets {
		cpu, rie, emu, machine := "-", "-", "-", "-"
		if tg.cpu != nil {
			cpu = fmt.Sprintf("%.0f", tg.median(roundResult.cpuPerDelivery))
			rie = fmt.Sprintf("%.0f", tg.median(roundResult.riePerDelivery))
			emu = fmt.Sprintf("%.0f", tg.median(roundResult.emulatorsPerDelivery))
			machine = fmt.Sprintf("%.0f", tg.median(roundResult.machinePerDelivery))
		}
		fmt.Fprintf(w, "%-8s %12.1f %9.2f %9.2f %9.2f %12s %12s %12s %14s %8d\n", tg.name, tg.median(roundResult.throughput),
			tg.median(roundResult.p50ms), tg.median(roundResult.p95ms), tg.median(roundResult.p99ms), cpu, rie, emu, machine, tg.errors())
	}
	if len(targets) != 2 {
		return
	}
	r, fl := targets[0], targets[1]
	ratio := func(v func(roundResult) float64) float64 { return ratioOf(r, fl, v) }
	fmt.Fprintf(w, "\n%s / %s (medians of %d rounds): throughput %.2f×, p50 %.2f×, p95 %.2f×, p99 %.2f×",
		r.name, fl.name, len(r.rounds), ratio(roundResult.throughput), ratio(roundResult.p50ms), ratio(roundResult.p95ms), ratio(roundResult.p99ms))
	if r.cpu != nil && fl.cpu != nil {
		fmt.Fprintf(w, ", CPU per delivery %.2f× (the machine's %.2f×)", ratio(roundResult.cpuPerDelivery), ratio(roundResult.machinePerDelivery))
	}
	fmt.Fprintln(w)
}

// writeBenchstat writes every round of every target to path in the Go
// benchmark format, one line per round, so that `benchstat -col /target
// path` compares the targets and `benchstat old new` two runs.
func writeBenchstat(path string, f loadFlags, targets []*loadTarget) error {
	var b strings.Builder
	fmt.Fprintf(&b, "goos: %s\ngoarch: %s\npkg: github.com/hookinbox/hookinbox/cmd/hookinbox\n", runtime.GOOS, runtime.GOARCH)
	if model := cpuModel(); model != "" {
		fmt.Fprintf(&b, "cpu: %s\n", model)
	}
	mode := fmt.Sprintf("concurrency=%d", f.concurrency)
	if f.rate > 0 {
		mode = fmt.Sprintf("rate=%g", f.rate)
	}
	for _, tg := range targets {
		for _, r := range tg.rounds {
			fmt.Fprintf(&b, "BenchmarkLoad/%s/target=%s %d %.0f ns/op %.1f deliveries/s %.3f p50-ms %.3f p95-ms %.3f p99-ms",
				mode, tg.name, r.sent, float64(r.elapsed)/float64(max(r.sent, 1)), r.throughput(), r.p50ms(), r.p95ms(), r.p99ms())
			if r.cpu != nil {
				fmt.Fprintf(&b, " %.1f cpu-us/delivery %.1f rie-cpu-us/delivery %.1f emulators-cpu-us/delivery %.1f machine-cpu-us/delivery",
					r.cpuPerDelivery(), r.riePerDelivery(), r.emulatorsPerDelivery(), r.machinePerDelivery())
			}
			b.WriteString("\n")
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("--benchstat: %w", err)
	}
	return nil
}

// cpuModel returns the first "model name" of /proc/cpuinfo, or "".
func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// stackTargets returns the running stack's receiver of p's deliveries
// and, unless --floor=false, the floor program served in this process on
// the stack's emulators; and the stack, nil when --url and --secret name
// it.
func stackTargets(ctx context.Context, f *loadFlags, p provider.Provider) ([]*loadTarget, *devState, func(), error) {
	st, err := loadState(f.stateFile)
	if err != nil && (f.url == "" || f.secret == "" || f.floor) {
		return nil, nil, nil, err
	}
	if f.url == "" {
		f.url = st.BaseURL + webhookPath + p.Name()
	}
	if f.secret == "" {
		f.secret = st.receiverSecret(p.Webhook().SecretEnv)
	}
	if err := requireLoopback(f.url); err != nil {
		return nil, nil, nil, err
	}
	targets := []*loadTarget{{name: "receiver", url: f.url}}
	if !f.floor {
		return targets, st, func() {}, nil
	}
	floorURL, stop, err := startFloor(ctx, st, p)
	if err != nil {
		return nil, nil, nil, err
	}
	return append(targets, &loadTarget{name: "floor", url: floorURL}), st, stop, nil
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
func startFloor(ctx context.Context, st *devState, p provider.Provider) (string, func(), error) {
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
	api := &lambdalocal.HTTPAPI{Routes: []lambdalocal.Route{{Method: p.Webhook().HTTPMethod(), Path: webhookPath + "{provider}", Function: lambdalocal.InProcess(h.Handle)}}}
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
	return "http://" + ln.Addr().String() + webhookPath + p.Name(), stop, nil
}

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
func (r roundResult) p50ms() float64      { return ms(r.p50) }
func (r roundResult) p95ms() float64      { return ms(r.p95) }
func (r roundResult) p99ms() float64      { return ms(r.p99) }

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
	// In rate mode each delivery is due at begin + i/rate and its latency
	// counts from then, so a target that falls behind is charged for the
	// wait (no coordinated omission); at most f.concurrency are in flight.
	type job struct {
		d   webhook.Request
		due time.Time
	}
	next := make(chan job)
	var wg sync.WaitGroup
	for i := 0; i < f.concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				took, err := loadDeliver(ctx, client, url, j.d)
				if !j.due.IsZero() {
					took = time.Since(j.due)
				}
				record(took, err)
			}
		}()
	}
	begin := time.Now()
	var interval time.Duration
	if f.rate > 0 {
		interval = time.Duration(float64(time.Second) / f.rate)
	}
feed:
	for i, d := range ds {
		j := job{d: d}
		if interval > 0 {
			j.due = begin.Add(time.Duration(i) * interval)
			if wait := time.Until(j.due); wait > 0 {
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					break feed
				}
			}
		}
		select {
		case next <- j:
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
		return res, fmt.Errorf("no delivery answered: %v", res.firstErr)
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
	// cpu, when set, returns the CPU time the target's processes have
	// used so far.
	cpu    func() (cpuTimes, error)
	rounds []roundResult
}

// median returns the median over the target's rounds of v.
func (t *loadTarget) median(v func(roundResult) float64) float64 {
	xs := make([]float64, len(t.rounds))
	for i, r := range t.rounds {
		xs[i] = v(r)
	}
	return median(xs)
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

func (t *loadTarget) errors() int {
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

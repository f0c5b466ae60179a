package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/sample"
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

// loadHelp is what load --help says above the flags; %s is the name of
// a provider other than the default.
const loadHelp = `
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
  hookinbox load --provider %s --count 1000`

// parseLoad parses load's command line; names are the providers it knows,
// the first the default.
func parseLoad(args []string, stdout io.Writer, names []string) (loadFlags, error) {
	var f loadFlags
	fs := newFlagSet("load", "[flags]", fmt.Sprintf(loadHelp, names[1]))
	fs.StringVar(&f.provider, "provider", names[0], "the provider whose deliveries load sends, its sample events in testdata/<provider>/ with fresh ids: "+strings.Join(names, ", "))
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
		return f, err
	}
	return f, f.check()
}

// check refuses values out of range and flags that do not go together.
func (f loadFlags) check() error {
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
	return nil
}

func (a *app) cmdLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseLoad(args, stdout, a.providers().Names())
	if err != nil {
		return err
	}
	p, ok := a.providers().Lookup(f.provider)
	switch {
	case !ok:
		return usagef("unknown --provider %q: load knows %s", f.provider, strings.Join(a.providers().Names(), ", "))
	case f.size > 0 && p.Webhook().IDOnly:
		return usagef("--size: a %s notification carries only an id", p.Name())
	}
	all, err := loadRuns(ctx, f, a.senders[p.Name()], stdout, stderr)
	if err != nil {
		return err
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

// loadRuns makes f.runs runs of s's deliveries, the floor opening every second one, and
// prints, over several, the median and range of their ratios. It returns
// every run's targets.
func loadRuns(ctx context.Context, f loadFlags, s sample.Sender, stdout, stderr io.Writer) ([]*loadTarget, error) {
	var all []*loadTarget
	var ratios []loadRatios
	for run := 1; run <= f.runs; run++ {
		if f.runs > 1 {
			fmt.Fprintf(stdout, "== run %d of %d\n", run, f.runs)
		}
		targets, err := loadRun(ctx, f, s, run%2 == 0, stdout, stderr)
		if err != nil {
			return nil, err
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
	return all, nil
}

// loadRun starts the targets (or finds the running stack's), warms them
// up and runs f.rounds alternating rounds, printing each round and the
// run's summary; it stops what it started before it returns. The
// receiver goes first, or the floor when floorFirst: the first round of a
// run is its slowest more often than not, so
// --runs lets the two open the runs in turn. It returns the receiver
// first either way.
func loadRun(ctx context.Context, f loadFlags, s sample.Sender, floorFirst bool, stdout, stderr io.Writer) ([]*loadTarget, error) {
	targets, root, stop, err := startLoadTargets(ctx, &f, s.Provider, stderr)
	if err != nil {
		return nil, err
	}
	defer stop()
	src, err := newLoadSource(root, s, f.size, envconfig.Split(f.secret))
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
	if err := warmUp(ctx, client, src, opening, f); err != nil {
		return nil, err
	}
	printLoadPlan(stdout, f, opening[0].name)
	for i := 0; i < f.rounds; i++ {
		order := opening
		if i%2 == 1 && len(targets) == 2 {
			order = []*loadTarget{opening[1], opening[0]}
		}
		for _, tg := range order {
			res, err := loadRound(ctx, client, src, tg, f, i+1)
			if err != nil {
				return nil, err
			}
			tg.rounds = append(tg.rounds, res)
			fmt.Fprintf(stdout, "  %-8s round %d: %s\n", tg.name, i+1, res)
		}
	}
	printLoadSummary(stdout, targets)
	return targets, nil
}

// startLoadTargets starts the targets, or finds the running stack's with
// --stack, and returns them, the repository root and how to stop them.
// It sets f.secret when it was not given.
func startLoadTargets(ctx context.Context, f *loadFlags, p provider.Provider, stderr io.Writer) ([]*loadTarget, string, func(), error) {
	var targets []*loadTarget
	var stop func()
	root := ""
	if f.stack {
		ts, st, stopStack, err := stackTargets(ctx, f, p)
		if err != nil {
			return nil, "", nil, err
		}
		targets, stop = ts, stopStack
		if st != nil {
			root = st.Root
		}
	} else {
		if f.secret == "" {
			f.secret = pipeline.LocalEnv("")[p.Webhook().SecretEnv]
		}
		fmt.Fprintf(stderr, "hookinbox load: starting the emulators and %d copies of each bootstrap under aws-lambda-rie (the first build takes a minute)\n", f.copies)
		ts, stopBootstraps, err := bootstrapTargets(ctx, *f, p)
		if err != nil {
			return nil, "", nil, err
		}
		targets, stop = ts, stopBootstraps
	}
	if root == "" {
		var err error
		if root, err = devstack.RepoRoot(""); err != nil {
			stop()
			return nil, "", nil, err
		}
	}
	return targets, root, stop, nil
}

// warmUp sends every target its warm-up deliveries, uncounted:
// connections, clients, every copy started, a first claim.
func warmUp(ctx context.Context, client *http.Client, src *loadSource, targets []*loadTarget, f loadFlags) error {
	for _, tg := range targets {
		warm := f
		warm.count, warm.rate = max(f.warmup, 2*f.copies), 0
		ds, err := src.deliveries(warm.count, f.dup)
		if err != nil {
			return err
		}
		if _, err := runRound(ctx, client, tg.url, ds, warm); err != nil {
			return fmt.Errorf("%s at %s: warm-up: %w", tg.name, tg.url, err)
		}
	}
	return nil
}

// printLoadPlan prints what the rounds do, first opening them.
func printLoadPlan(w io.Writer, f loadFlags, first string) {
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
	fmt.Fprintf(w, "hookinbox load: %s; %s, %s, %d rounds per target (alternating, %s first), %d warm-up deliveries each, %.0f%% duplicates\n",
		where, mode, bound, f.rounds, first, f.warmup, f.dup*100)
}

// loadRound runs round number round against tg and measures the CPU its
// processes used over it, when tg can say.
func loadRound(ctx context.Context, client *http.Client, src *loadSource, tg *loadTarget, f loadFlags, round int) (roundResult, error) {
	n := f.count
	if n == 0 {
		n = int(math.Max(f.rate, 1000) * f.duration.Seconds()) // enough for the duration
	}
	ds, err := src.deliveries(n, f.dup)
	if err != nil {
		return roundResult{}, err
	}
	var before cpuTimes
	if tg.cpu != nil {
		if before, err = tg.cpu(); err != nil {
			return roundResult{}, fmt.Errorf("%s: %w", tg.name, err)
		}
	}
	res, err := runRound(ctx, client, tg.url, ds, f)
	if err != nil {
		return res, fmt.Errorf("%s round %d: %w", tg.name, round, err)
	}
	if tg.cpu == nil {
		return res, nil
	}
	after, err := tg.cpu()
	if err != nil {
		return res, fmt.Errorf("%s: %w", tg.name, err)
	}
	res.cpu = &cpuTimes{
		function: after.function - before.function, rie: after.rie - before.rie, emulators: after.emulators - before.emulators,
		load: after.load - before.load, machine: after.machine - before.machine,
	}
	return res, nil
}

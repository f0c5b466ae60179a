package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"

	"github.com/hookinbox/hookinbox/internal/local/chaos"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/internal/platform/envconfig"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

type chaosFlags struct {
	events      string
	generate    int
	dup         int
	shuffle     bool
	concurrency int
	jitter      time.Duration
	queueDups   bool
	seed        uint64
	url         string
	secret      string
	stateFile   string
	quiet       time.Duration
	fault       string
	template    string
	params      envFlag

	// destination: both runs deliver every event to a sink; the chaos
	// run's answers 503 to each event's first destinationFail attempts.
	destination     bool
	destinationFail int
}

// errDifferences makes the exit status 1 after the verdict is printed.
var errDifferences = errors.New("the chaos run differs from the reference run")

// chaosHelp is what chaos --help says above the flags.
const chaosHelp = `
The duplicate-proof test: delivers every event of FILE.jsonl --dup times, in
shuffled order, from --concurrency concurrent senders, each delivery signed
as its provider signs it and retried while it is answered 5xx, sends one more SQS
message for each accepted delivery (SQS delivers at least once), waits until
the pipeline is quiet (events queue empty, nothing RECEIVED, PROCESSING or
FAILED), then compares the business state, the effect ledger and each
event's final status with a reference run: one in-order delivery of each
event on a fresh stack. It prints the verdict with every difference and
exits 1 on any; an effect carried out twice is a difference.

` + chaos.CorpusHelp + `

Both runs use fresh stacks of template.yaml on the local emulators
(dynalite and local-aws-sqs, or HOOKINBOX_EMULATORS=moto, or the
AWS_ENDPOINT_URL* ones), with the functions in this process and the
stand-ins of SES and the providers' APIs. With --url the chaos run goes
to a running stack instead (hookinbox dev: its queue and tables come from
its state file) and only the business records about the corpus are
compared.

--fault NAME puts Shopify's toxiproxy (pinned in go.mod) between the chaos
stack's functions and ` + chaos.ProxiedHelp + `,
and injects the fault while the chaos run lasts; the reference run has
none. The chaos stack then runs with LEASE_DURATION 30s. See docs/reliability.md for every fault and
its figures.

--destination gives both runs' stacks a destination that gets every event: a
sink in this process that verifies each signature (as hookinbox sink does).
The verdict then checks what it received too: every delivery verified, every
DONE event delivered at least once, nothing delivered that was not accepted,
and every delivery of an event under its one stable webhook-id.
--destination-fail N makes the chaos run's sink answer 503 to each event's
first N attempts, so every event is delivered again.`

// parseChaos parses chaos's command line. f.seed is set: the one given,
// else one from the clock.
func parseChaos(args []string, stdout io.Writer) (chaosFlags, error) {
	var f chaosFlags
	fs := newFlagSet("chaos", "--events FILE.jsonl [flags]", chaosHelp)
	fs.StringVar(&f.events, "events", "", "the events, one JSON object a line")
	fs.IntVar(&f.generate, "generate", 0, "write a generated corpus of this many events to stdout and exit")
	fs.IntVar(&f.dup, "dup", 2, "deliveries of each event")
	fs.BoolVar(&f.shuffle, "shuffle", true, "deliver in a random order (--shuffle=false keeps the file's order)")
	fs.IntVar(&f.concurrency, "concurrency", 16, "concurrent senders")
	fs.DurationVar(&f.jitter, "delay-jitter", 0, "each delivery first waits a random time up to this, e.g. 2s")
	fs.BoolVar(&f.queueDups, "queue-dups", true, "send one more SQS message for each accepted delivery")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the order and the jitter (default: from the clock; printed)")
	fs.StringVar(&f.url, "url", "", "deliver the chaos run to this running stack's webhook URL")
	fs.StringVar(&f.secret, "secret", "", "with --url: the first provider's signing secret(s), comma-separated, as hookinbox dev --secret sets them (default: the running stack's)")
	fs.StringVar(&f.stateFile, "state-file", defaultStateFile(), "with --url: state file of the running stack")
	fs.DurationVar(&f.quiet, "quiet-within", 10*time.Minute, "how long each run may take to get quiet")
	fs.StringVar(&f.fault, "fault", "", "inject this fault through toxiproxy during the chaos run: "+faultNames())
	fs.StringVar(&f.template, "template", "", "SAM template of both runs' stacks (default template.yaml at the repository root); another module's (hookinbox template) runs its functions as the Makefile beside it builds them, under aws-lambda-rie, and compares every item of its tables")
	f.params = envFlag{}
	fs.Var(f.params, "parameter", "set the template parameter Name=Value (repeatable); one without a default needs it")
	fs.BoolVar(&f.destination, "destination", false, "both runs deliver every event to a destination, a sink in this process; the verdict checks what it received")
	fs.IntVar(&f.destinationFail, "destination-fail", 0, "with --destination: the chaos run's sink answers 503 to the first N attempts of each event")
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return f, err
	}
	if len(rest) > 0 {
		return f, usagef("unexpected argument %q", rest[0])
	}
	if f.seed == 0 {
		f.seed = uint64(time.Now().UnixNano())
	}
	if f.generate > 0 {
		return f, nil
	}
	return f, f.check()
}

// check refuses flags that do not go together.
func (f chaosFlags) check() error {
	switch {
	case f.events == "":
		return usagef("--events FILE.jsonl is required (or --generate N)")
	case f.dup < 1:
		return usagef("--dup must be at least 1")
	case f.concurrency < 1:
		return usagef("--concurrency must be at least 1")
	case f.jitter < 0:
		return usagef("--delay-jitter must not be negative")
	case f.fault != "" && f.url != "":
		return usagef("--fault works on the local chaos stack, not with --url")
	case f.destination && f.url != "":
		return usagef("--destination works on the local chaos stack, not with --url")
	case f.destinationFail != 0 && (!f.destination || f.destinationFail < 0):
		return usagef("--destination-fail wants --destination and a positive count")
	}
	if f.fault != "" {
		if _, err := chaos.FaultNamed(f.fault); err != nil {
			return usagef("--fault: %v", err)
		}
	}
	return nil
}

func (a *app) cmdChaos(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseChaos(args, stdout)
	if err != nil {
		return err
	}
	if f.generate > 0 {
		for _, line := range chaos.Generate(f.generate, f.seed, time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)) {
			if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
				return err
			}
		}
		return nil
	}
	events, err := readChaosEvents(f.events)
	if err != nil {
		return err
	}
	c := &chaosRun{f: f, events: events, stderr: stderr}
	defer c.close()
	return c.run(ctx, a.providers(), stdout)
}

// readChaosEvents reads the corpus in path; one without events is an
// error.
func readChaosEvents(path string) ([]chaos.Event, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	events, err := chaos.ReadEvents(file)
	file.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("%s holds no events", path)
	}
	return events, nil
}

// chaosRun is one hookinbox chaos: a reference run of the corpus on a
// fresh local stack, then the chaos run, on another or on --url's.
type chaosRun struct {
	f      chaosFlags
	events []chaos.Event
	stderr io.Writer

	root     string
	tpl      *samtemplate.Template
	opts     chaos.LocalOptions // of both runs' local stacks
	sinks    *chaosSinks
	emu      *devstack.Emulators
	cleanups []func() // run last first by close
}

// close runs the cleanups, last first.
func (c *chaosRun) close() {
	for i := len(c.cleanups) - 1; i >= 0; i-- {
		c.cleanups[i]()
	}
}

// run runs the reference and the chaos run and prints the verdict;
// providers are those whose secrets --url's stack holds.
func (c *chaosRun) run(ctx context.Context, providers *provider.Registry, stdout io.Writer) error {
	if err := c.prepare(ctx); err != nil {
		return err
	}
	var remote *chaos.Remote
	if c.f.url != "" {
		var err error
		if remote, err = remoteTarget(c.f, providers); err != nil {
			return err
		}
	}
	fmt.Fprintf(c.stderr, "hookinbox chaos: %d events from %s; starting the emulators\n", len(c.events), c.f.events)
	emu, err := devstack.Start(ctx, devstack.Options{Root: c.root, Stderr: nil})
	if err != nil {
		return err
	}
	c.emu = emu
	c.cleanups = append(c.cleanups, func() { emu.Stop() })
	refStats, ref, err := c.reference(ctx)
	if err != nil {
		return err
	}
	var target chaos.Target = remote
	var injector *chaos.Injector
	if remote == nil {
		if target, injector, err = c.chaosStack(ctx); err != nil {
			return err
		}
	}
	gotStats, got, err := c.chaos(ctx, target, injector)
	if err != nil {
		return err
	}
	if remote != nil {
		got = got.Within(ref)
	}
	diffs := chaos.Compare(ref, got)
	destLines, destDiffs := c.sinks.check(ref, got)
	diffs = append(diffs, destDiffs...)
	printVerdict(stdout, c.f, refStats, ref, gotStats, got, diffs, remote != nil, destLines...)
	if len(diffs) > 0 {
		return errDifferences
	}
	return nil
}

// prepare loads the template and sets both runs' stack options: the
// sinks, and for another module's stack its own mains, built as sam build
// builds them.
func (c *chaosRun) prepare(ctx context.Context) error {
	root, err := devstack.RepoRoot("")
	if err != nil {
		return err
	}
	tplPath := c.f.template
	if tplPath == "" {
		tplPath = filepath.Join(root, "template.yaml")
	}
	if c.tpl, err = samtemplate.Load(tplPath); err != nil {
		return err
	}
	if c.sinks, err = newChaosSinks(c.f); err != nil {
		return err
	}
	c.root, c.opts = root, chaos.LocalOptions{Params: c.f.params, Destination: c.sinks.reference()}
	dir, err := filepath.Abs(filepath.Dir(tplPath))
	if err != nil || dir == root {
		return err
	}
	buildDir, err := os.MkdirTemp("", "hookinbox-chaos-")
	if err != nil {
		return err
	}
	c.cleanups = append(c.cleanups, func() { os.RemoveAll(buildDir) })
	c.opts.Bootstraps = map[string]string{}
	for _, id := range []string{"ReceiverFunction", "ProcessorFunction", "ReconcilerFunction"} {
		fmt.Fprintf(c.stderr, "hookinbox chaos: building %s with make build-%s in %s\n", id, id, dir)
		if c.opts.Bootstraps[id], err = devstack.BuildFunctionIn(ctx, dir, id, filepath.Join(buildDir, id)); err != nil {
			return err
		}
	}
	return nil
}

// deliver runs the corpus on target as cfg says, and reads what it left.
func (c *chaosRun) deliver(ctx context.Context, name string, target chaos.Target, cfg chaos.Config) (chaos.Stats, chaos.Snapshot, error) {
	fmt.Fprintf(c.stderr, "hookinbox chaos: %s run: %d deliveries of %d events\n", name, max(cfg.Dup, 1)*len(c.events), len(c.events))
	cfg.Progress = func(msgs, unfinished int) {
		fmt.Fprintf(c.stderr, "hookinbox chaos: %s run: waiting for quiet: %d messages queued, %d events unfinished\n", name, msgs, unfinished)
	}
	st, err := chaos.Run(ctx, target, c.events, cfg)
	if err != nil {
		return st, chaos.Snapshot{}, fmt.Errorf("%s run: %w", name, err)
	}
	keys := make([]webhook.Key, len(c.events))
	for i, ev := range c.events {
		keys[i] = ev.Key()
	}
	snap, err := target.Snapshot(ctx, keys)
	if err != nil {
		return st, snap, fmt.Errorf("%s run: %w", name, err)
	}
	return st, snap, nil
}

// stackName returns the name of a run's local stack.
func (c *chaosRun) stackName(run string) string {
	return fmt.Sprintf("chaos-%s-%08x", run, uint32(c.f.seed))
}

// reference runs each event once, in order, on a fresh local stack.
func (c *chaosRun) reference(ctx context.Context) (chaos.Stats, chaos.Snapshot, error) {
	refStack, err := chaos.NewLocal(ctx, c.emu, c.tpl, c.stackName("ref"), c.opts)
	if err != nil {
		return chaos.Stats{}, chaos.Snapshot{}, err
	}
	if err := c.sinks.learn(refStack); err != nil {
		refStack.Close()
		return chaos.Stats{}, chaos.Snapshot{}, err
	}
	st, snap, err := c.deliver(ctx, "reference", refStack, chaos.Config{QuietWithin: c.f.quiet})
	if cerr := refStack.Close(); err == nil {
		err = cerr
	}
	return st, snap, err
}

// chaosStack starts the chaos run's local stack, behind toxiproxy with
// --fault, whose injector it returns then.
func (c *chaosRun) chaosStack(ctx context.Context) (*chaos.Local, *chaos.Injector, error) {
	opts := c.opts
	opts.Destination = c.sinks.chaos()
	proxies := map[string]*toxiproxy.Proxy{}
	if c.f.fault != "" {
		tp, err := devstack.StartToxiproxy(ctx, devstack.Options{Root: c.root})
		if err != nil {
			return nil, nil, err
		}
		c.cleanups = append(c.cleanups, func() { tp.Stop() })
		opts.Lease = 30 * time.Second
		opts.Proxy = func(name, upstream string) (string, error) {
			p, url, err := tp.Proxy(name, upstream)
			proxies[name] = p
			return url, err
		}
	}
	l, err := chaos.NewLocal(ctx, c.emu, c.tpl, c.stackName("run"), opts)
	if err != nil {
		return nil, nil, err
	}
	c.cleanups = append(c.cleanups, func() { l.Close() })
	if c.f.fault == "" {
		return l, nil, nil
	}
	fault, _ := chaos.FaultNamed(c.f.fault)
	fmt.Fprintf(c.stderr, "hookinbox chaos: fault %s: %s\n", fault.Name, fault.About)
	injector, err := chaos.Inject(fault, proxies)
	return l, injector, err
}

// chaos runs the chaos run on target, with the fault injector switched
// off at its end.
func (c *chaosRun) chaos(ctx context.Context, target chaos.Target, injector *chaos.Injector) (chaos.Stats, chaos.Snapshot, error) {
	f := c.f
	cfg := chaos.Config{Dup: f.dup, Shuffle: f.shuffle, Concurrency: f.concurrency, DelayJitter: f.jitter,
		QueueDups: f.queueDups, Seed: f.seed, QuietWithin: f.quiet}
	st, snap, err := c.deliver(ctx, "chaos", target, cfg)
	if injector != nil {
		if ierr := injector.Stop(); err == nil && ierr != nil {
			err = ierr
		}
		fmt.Fprintf(c.stderr, "hookinbox chaos: fault %s switched on %d times\n", f.fault, injector.Cycles)
	}
	return st, snap, err
}

// faultNames lists the --fault scenarios.
func faultNames() string {
	var names []string
	for _, f := range chaos.Faults {
		names = append(names, f.Name)
	}
	return strings.Join(names, ", ")
}

// remoteTarget builds the --url target from the running stack's state file.
func remoteTarget(f chaosFlags, providers *provider.Registry) (*chaos.Remote, error) {
	st, err := loadState(f.stateFile)
	if err != nil {
		return nil, fmt.Errorf("--url needs the running stack's queue and tables: %w", err)
	}
	cfg, err := st.awsConfig()
	if err != nil {
		return nil, err
	}
	inboxTable, err := st.table("InboxTable")
	if err != nil {
		return nil, err
	}
	// The example shop's table, or every other table of another
	// module's stack.
	shopTable := st.Tables["ShopTable"]
	business := map[string]string{}
	for id, name := range st.Tables {
		if id != "InboxTable" {
			business[id] = name
		}
	}
	q, ok := st.Queues["EventsQueue"]
	if !ok {
		return nil, errors.New("the running stack has no EventsQueue")
	}
	// Every provider's secrets as the stack's receiver holds them, as
	// `hookinbox dev` enabled them; --secret replaces the first
	// provider's, which `hookinbox dev --secret` sets.
	secrets := chaos.Secrets{}
	for i, p := range providers.All() {
		v := st.receiverSecret(p)
		if i == 0 && f.secret != "" {
			v = f.secret
		}
		if v != "" {
			secrets[p.Name()] = envconfig.Split(v)
		}
	}
	return chaos.NewRemote(chaos.RemoteConfig{
		WebhookURL: f.url, Secrets: secrets,
		Endpoints: st.Endpoints, InboxTable: inboxTable, ShopTable: shopTable, BusinessTables: business, EventsQueueURL: q.URL,
	}, cfg), nil
}

package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hookinbox/hookinbox/internal/stacktemplate"
	"github.com/hookinbox/hookinbox/provider"

	"github.com/hookinbox/hookinbox/internal/destination"
	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
)

// Local defaults. The secrets are not secrets: they only ever sign and
// authorize requests to this machine's stack and stand-ins.
const (
	defaultAddr      = "127.0.0.1:3000"
	addrEnv          = "HOOKINBOX_ADDR"
	defaultStackName = "hookinbox"
)

type devFlags struct {
	addr         string
	secret       string
	rie          bool
	verbose      bool
	stateFile    string
	stackName    string
	template     string
	dynamoDBPort int
	sqsPort      int
	env          envFlag
	params       envFlag

	// forward is a destination's URL: every event, signed with forwardSecret.
	forward, forwardSecret string
}

// envFlag collects repeated -env KEY=VALUE flags.
type envFlag map[string]string

func (e envFlag) String() string { return "" }

func (e envFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	e[k] = v
	return nil
}

// metricsFileFor returns the metrics file beside a state file.
func metricsFileFor(stateFile string) string {
	return strings.TrimSuffix(stateFile, filepath.Ext(stateFile)) + "-metrics.jsonl"
}

// localAddr is the address hookinbox dev serves on unless --addr says
// otherwise: $HOOKINBOX_ADDR, else 127.0.0.1:3000.
func localAddr() string {
	if a := os.Getenv(addrEnv); a != "" {
		return a
	}
	return defaultAddr
}

func (a *app) cmdDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := devFlags{env: envFlag{}, params: envFlag{}}
	fs := newFlagSet("dev", "[flags]", `
Runs the local stack in the foreground until Ctrl-C: dynalite,
local-aws-sqs and gofakes3 (S3) on 127.0.0.1 (unless AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_DYNAMODB
and AWS_ENDPOINT_URL_SQS point elsewhere, e.g. LocalStack, with
AWS_ENDPOINT_URL_S3 for S3), every table, queue and bucket of template.yaml
(named hookinbox-inbox, hookinbox-events, ...), SES and
provider API stand-ins, and every function of the template wired to its events:
HttpApi routes served on --addr, SQS event sources with the template's batch
size and window, rate(...) schedules. GET /healthz answers 200 once ready.

Functions run in this process with the same wiring as in Lambda
(internal/lambdafn), or with --rie as the real bootstrap binaries under the
Lambda Runtime Interface Emulator.

The stack's endpoints and names go to a state file that send, inspect, state
and replay read.

--forward URL adds a destination that gets every event, signed per Standard
Webhooks with --forward-secret; run hookinbox sink to receive and verify
them. The template's own destinations (DESTINATIONS) are signed with it too;
one that is a bus or a URL off this machine delivers to --forward's URL
instead, and without --forward dev refuses to start.`)
	fs.StringVar(&f.addr, "addr", localAddr(), "address of the HTTP API (default from $"+addrEnv+")")
	first := a.firstProvider()
	fs.StringVar(&f.secret, "secret", pipeline.LocalEnv("")[first.Webhook().SecretEnv], "signing secret the receiver accepts for "+first.Name()+", the first provider")
	fs.BoolVar(&f.rie, "rie", false, "run the real bootstrap binaries under aws-lambda-rie instead of in-process handlers")
	fs.BoolVar(&f.verbose, "verbose", false, "print the functions' own logs")
	fs.StringVar(&f.stateFile, "state-file", defaultStateFile(), "where to write the stack's endpoints and names (default from $"+stateFileEnv+")")
	fs.StringVar(&f.stackName, "stack-name", defaultStackName, "stack name that prefixes table and queue names")
	fs.StringVar(&f.template, "template", "", "SAM template (default template.yaml at the repository root); another module's (hookinbox template) runs its functions as the Makefile beside it builds them, under aws-lambda-rie")
	fs.IntVar(&f.dynamoDBPort, "dynamodb-port", 0, "port of dynalite on 127.0.0.1 (default: a free one)")
	fs.IntVar(&f.sqsPort, "sqs-port", 0, "port of local-aws-sqs on 127.0.0.1 (default: a free one)")
	fs.Var(f.env, "env", "set KEY=VALUE in every function's environment (repeatable)")
	fs.Var(f.params, "parameter", "set the template parameter Name=Value (repeatable); one without a default needs it")
	fs.StringVar(&f.forward, "forward", "", "deliver every event to this URL as a destination (e.g. http://127.0.0.1:4100/, where hookinbox sink listens)")
	fs.StringVar(&f.forwardSecret, "forward-secret", pipeline.DestinationSecret, "whsec_ secret that signs the deliveries to every destination")
	rest, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("dev takes no arguments, got %q", rest)
	}
	if err := checkForward(f.forward, f.forwardSecret); err != nil {
		return err
	}
	if f.secret == "" {
		return usagef("--secret must not be empty")
	}
	d := &devStack{app: a, flags: f, stdout: stdout, stderr: stderr}
	return d.run(ctx)
}

// devStack is one run of `hookinbox dev`.
type devStack struct {
	app            *app
	flags          devFlags
	stdout, stderr io.Writer
	buildDir       string // where make build-<LogicalId> runs: the template's directory
	sampleType     string // the event type the banner sends: one the business handles

	logMu sync.Mutex
	ready atomic.Bool
	api   atomic.Pointer[lambdalocal.HTTPAPI]
	// reconciler runs the ReconcilerFunction on `hookinbox reconcile`.
	reconciler atomic.Pointer[scheduleLogger]
	// stack holds the API stand-ins; every webhook POSTed is told to them
	// first (pipeline.Stack.Delivered, see serveLogged).
	stack atomic.Pointer[pipeline.Stack]
	// verifiers read the events of each delivery for the log line, by
	// provider (see deliveryVerifiers); set before the stack is ready.
	verifiers map[string]provider.Verifier
	// destinations are the template's, which the processor delivers to
	// at their local URL (pipeline.LocalURL).
	destinations []destination.Config

	cleanups []func()
}

// sampleType returns the event type the banner sends to the first
// provider: the first its template parameter <Provider>EventTypes lists
// (the business's types, as hookinbox template writes them), else the
// type of the provider's first send example.
func (a *app) sampleType(tpl *samtemplate.Template) string {
	name := a.firstProvider().Name()
	for param, p := range tpl.Parameters {
		first, _, _ := strings.Cut(p.Default, ",")
		if first = strings.TrimSpace(first); first != "" && stacktemplate.EventTypesParameter(param, name) {
			return first
		}
	}
	for _, e := range a.senders[name].Examples {
		if f := strings.Fields(e); len(f) > 3 && f[1] == "send" && f[2] == name {
			return f[3]
		}
	}
	return "<event type>"
}

// defer_ registers a cleanup, run in reverse order when the stack stops.
func (d *devStack) defer_(f func()) { d.cleanups = append(d.cleanups, f) }

func (d *devStack) run(ctx context.Context) (err error) {
	defer func() { err = d.stop(ctx, err) }()
	if other, err := loadState(d.flags.stateFile); err == nil && other.PID != os.Getpid() {
		return fmt.Errorf("another hookinbox dev (pid %d, %s) uses the state file %s: stop it, or pass --state-file", other.PID, other.BaseURL, d.flags.stateFile)
	}
	root, tpl, err := d.loadTemplate()
	if err != nil {
		return err
	}
	baseURL, serveErr, err := d.listen()
	if err != nil {
		return err
	}
	emu, err := d.startEmulators(ctx, root)
	if err != nil {
		return err
	}
	st, err := d.startStack(ctx, emu, tpl)
	if err != nil {
		return err
	}
	fns, err := st.Functions()
	if err != nil {
		return err
	}
	invokers, err := d.startFunctions(ctx, st, fns)
	if err != nil {
		return err
	}
	d.wire(ctx, st, fns, invokers)
	if err := d.publish(root, baseURL, st, fns); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		d.logf("stopping (signal received)")
		return nil
	case err := <-serveErr:
		return fmt.Errorf("HTTP server: %w", err)
	}
}

// stop runs the cleanups, last first, and returns err: nil when ctx
// ended while the stack was starting, which is no failure.
func (d *devStack) stop(ctx context.Context, err error) error {
	for i := len(d.cleanups) - 1; i >= 0; i-- {
		d.cleanups[i]()
	}
	if err != nil && ctx.Err() != nil {
		d.logf("interrupted while starting (%v)", err)
		err = nil
	}
	if err == nil {
		d.logf("stopped; nothing left running")
	}
	return err
}

// loadTemplate returns the repository root and the template dev runs:
// --template's, else the root's template.yaml. Another module's stack
// (stacktemplate) runs its own mains, built by the Makefile beside its
// template as sam build does, under aws-lambda-rie.
func (d *devStack) loadTemplate() (string, *samtemplate.Template, error) {
	root, err := devstack.RepoRoot("")
	if err != nil {
		return "", nil, err
	}
	tplPath := d.flags.template
	if tplPath == "" {
		tplPath = filepath.Join(root, "template.yaml")
	}
	tpl, err := samtemplate.Load(tplPath)
	if err != nil {
		return "", nil, fmt.Errorf("load template: %w", err)
	}
	d.sampleType = d.app.sampleType(tpl)
	if d.buildDir, err = filepath.Abs(filepath.Dir(tplPath)); err != nil {
		return "", nil, err
	}
	if d.buildDir != root && !d.flags.rie {
		d.logf("%s is not hookinbox's template: its functions are built by the Makefile beside it and run under aws-lambda-rie", tplPath)
		d.flags.rie = true
	}
	return root, tpl, nil
}

// listen serves d on --addr, first: a busy port fails before anything
// starts, and /healthz answers 503 while the rest comes up. It returns
// the base URL and the server's end.
func (d *devStack) listen() (string, <-chan error, error) {
	ln, err := net.Listen("tcp", d.flags.addr)
	if err != nil {
		return "", nil, fmt.Errorf("listen on %s: %w (pass --addr 127.0.0.1:4000 or set %s to use another port)", d.flags.addr, err, addrEnv)
	}
	srv := &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	d.defer_(func() {
		d.ready.Store(false)
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	})
	return "http://" + ln.Addr().String(), serveErr, nil
}

// startEmulators starts dynalite, local-aws-sqs and gofakes3, or uses the
// endpoints AWS_ENDPOINT_URL* name.
func (d *devStack) startEmulators(ctx context.Context, root string) (*devstack.Emulators, error) {
	if dir, err := devstack.EmulatorDir(root); err == nil && os.Getenv("AWS_ENDPOINT_URL") == "" && os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "dynalite")); err != nil {
			d.logf("installing the emulators into %s: npm ci (first run only; takes a minute)", dir)
		}
	}
	d.logf("starting dynalite, local-aws-sqs and gofakes3")
	emu, err := devstack.Start(ctx, devstack.Options{
		Root: root, Stderr: d.childLog("emulators"),
		DynamoDBPort: d.flags.dynamoDBPort, SQSPort: d.flags.sqsPort,
		// The first webhook is then as fast as the thousandth.
		WarmUp: true,
	})
	if err != nil {
		return nil, err
	}
	d.defer_(func() {
		if err := emu.Stop(); err != nil {
			d.logf("%v", err)
		}
	})
	if emu.External {
		d.logf("using DynamoDB at %s and SQS at %s from AWS_ENDPOINT_URL*", emu.DynamoDBURL, emu.SQSURL)
	}
	return emu, nil
}

// startStack creates the template's tables, queues and buckets on emu
// and starts the stand-ins for SES and the Stripe, GoPay and Mollie APIs.
// Every function appends its metric lines to one file beside the state
// file, started afresh, which `hookinbox status` reads.
func (d *devStack) startStack(ctx context.Context, emu *devstack.Emulators, tpl *samtemplate.Template) (*pipeline.Stack, error) {
	metricsFile := metricsFileFor(d.flags.stateFile)
	if err := os.WriteFile(metricsFile, nil, 0o644); err != nil {
		return nil, fmt.Errorf("create the metrics file: %w", err)
	}
	d.defer_(func() { os.Remove(metricsFile) })
	env := map[string]string{"METRICS_FILE": metricsFile, d.app.firstProvider().Webhook().SecretEnv: d.flags.secret}
	maps.Copy(env, d.flags.env)
	st, err := pipeline.Start(ctx, emu, pipeline.Options{Name: d.flags.stackName, Template: tpl, Env: env, Log: d.functionLogger, Params: d.flags.params,
		Forward: d.flags.forward, DestinationSecret: d.flags.forwardSecret})
	if err != nil {
		if emu.External {
			return nil, fmt.Errorf("%w\n(the tables or queues may exist from an earlier run: delete them, or pass --stack-name another-name)", err)
		}
		return nil, err
	}
	d.defer_(func() {
		if err := st.Close(); err != nil {
			d.logf("%v", err)
		}
	})
	d.stack.Store(st)
	if d.destinations, err = devDestinations(st, d.flags.forward); err != nil {
		return nil, err
	}
	return st, nil
}

// publish writes the state file the other commands read, marks the stack
// ready and prints the banner.
func (d *devStack) publish(root, baseURL string, st *pipeline.Stack, fns []pipeline.Function) error {
	state, err := d.stateOf(root, baseURL, st, fns)
	if err != nil {
		return err
	}
	if err := writeState(d.flags.stateFile, state); err != nil {
		return err
	}
	d.defer_(func() { removeState(d.flags.stateFile) })
	d.ready.Store(true)
	d.printBanner(state, fns)
	return nil
}

var _ flag.Value = envFlag(nil)

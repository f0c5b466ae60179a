package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
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
	"github.com/hookinbox/hookinbox/internal/platform/logs"
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

func cmdDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
	first := firstProvider()
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
	d := &devStack{flags: f, stdout: stdout, stderr: stderr}
	return d.run(ctx)
}

// devStack is one run of `hookinbox dev`.
type devStack struct {
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
func sampleType(tpl *samtemplate.Template) string {
	name := firstProvider().Name()
	for param, p := range tpl.Parameters {
		first, _, _ := strings.Cut(p.Default, ",")
		if first = strings.TrimSpace(first); first != "" && stacktemplate.EventTypesParameter(param, name) {
			return first
		}
	}
	for _, e := range senders()[name].Examples {
		if f := strings.Fields(e); len(f) > 3 && f[1] == "send" && f[2] == name {
			return f[3]
		}
	}
	return "<event type>"
}

// logf prints one timestamped line on stderr.
func (d *devStack) logf(format string, args ...any) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	fmt.Fprintf(d.stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// defer_ registers a cleanup, run in reverse order when the stack stops.
func (d *devStack) defer_(f func()) { d.cleanups = append(d.cleanups, f) }

func (d *devStack) run(ctx context.Context) (err error) {
	defer func() {
		for i := len(d.cleanups) - 1; i >= 0; i-- {
			d.cleanups[i]()
		}
		if err != nil && ctx.Err() != nil {
			// Interrupted while starting: not a failure.
			d.logf("interrupted while starting (%v)", err)
			err = nil
		}
		if err == nil {
			d.logf("stopped; nothing left running")
		}
	}()

	if other, err := loadState(d.flags.stateFile); err == nil && other.PID != os.Getpid() {
		return fmt.Errorf("another hookinbox dev (pid %d, %s) uses the state file %s: stop it, or pass --state-file", other.PID, other.BaseURL, d.flags.stateFile)
	}
	root, err := devstack.RepoRoot("")
	if err != nil {
		return err
	}
	tplPath := d.flags.template
	if tplPath == "" {
		tplPath = filepath.Join(root, "template.yaml")
	}
	tpl, err := samtemplate.Load(tplPath)
	if err != nil {
		return fmt.Errorf("load template: %w", err)
	}
	d.sampleType = sampleType(tpl)
	// Another module's stack (stacktemplate): its functions are its own
	// mains, built by the Makefile beside its template as sam build does.
	if d.buildDir, err = filepath.Abs(filepath.Dir(tplPath)); err != nil {
		return err
	}
	if d.buildDir != root && !d.flags.rie {
		d.logf("%s is not hookinbox's template: its functions are built by the Makefile beside it and run under aws-lambda-rie", tplPath)
		d.flags.rie = true
	}

	// Listen first: a busy port fails before anything starts, and
	// /healthz answers 503 while the rest comes up.
	ln, err := net.Listen("tcp", d.flags.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (pass --addr 127.0.0.1:4000 or set %s to use another port)", d.flags.addr, err, addrEnv)
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
	baseURL := "http://" + ln.Addr().String()

	// Emulators.
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
		return err
	}
	d.defer_(func() {
		if err := emu.Stop(); err != nil {
			d.logf("%v", err)
		}
	})
	if emu.External {
		d.logf("using DynamoDB at %s and SQS at %s from AWS_ENDPOINT_URL*", emu.DynamoDBURL, emu.SQSURL)
	}

	// Every function appends its metric lines to one file beside the
	// state file, started afresh, which `hookinbox status` reads.
	metricsFile := metricsFileFor(d.flags.stateFile)
	if err := os.WriteFile(metricsFile, nil, 0o644); err != nil {
		return fmt.Errorf("create the metrics file: %w", err)
	}
	d.defer_(func() { os.Remove(metricsFile) })
	env := map[string]string{"METRICS_FILE": metricsFile, firstProvider().Webhook().SecretEnv: d.flags.secret}
	maps.Copy(env, d.flags.env)
	// The template's tables and queues, the stand-ins for SES and the
	// Stripe, GoPay and Mollie APIs.
	st, err := pipeline.Start(ctx, emu, pipeline.Options{Name: d.flags.stackName, Template: tpl, Env: env, Log: d.functionLogger, Params: d.flags.params,
		Forward: d.flags.forward, DestinationSecret: d.flags.forwardSecret})
	if err != nil {
		if emu.External {
			return fmt.Errorf("%w\n(the tables or queues may exist from an earlier run: delete them, or pass --stack-name another-name)", err)
		}
		return err
	}
	d.defer_(func() {
		if err := st.Close(); err != nil {
			d.logf("%v", err)
		}
	})
	d.stack.Store(st)
	if d.destinations, err = devDestinations(st, d.flags.forward); err != nil {
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

	select {
	case <-ctx.Done():
		d.logf("stopping (signal received)")
		return nil
	case err := <-serveErr:
		return fmt.Errorf("HTTP server: %w", err)
	}
}

// startFunctions returns an Invoker for every function: its handler built
// in process (pipeline.Stack.Build), or with --rie its bootstrap running
// under aws-lambda-rie (pipeline.Stack.StartBootstrap).
func (d *devStack) startFunctions(ctx context.Context, st *pipeline.Stack, fns []pipeline.Function) (map[string]lambdalocal.Invoker, error) {
	invokers := map[string]lambdalocal.Invoker{}
	if !d.flags.rie {
		// The SDK ignores per-service endpoints from ConfigSources when
		// AWS_ENDPOINT_URL is set in the environment and the service's own
		// variable is not, so set them here too: SES must reach the
		// stand-in, not AWS.
		if os.Getenv("AWS_ENDPOINT_URL") != "" {
			for k, v := range st.Endpoints {
				if strings.HasPrefix(k, "AWS_ENDPOINT_URL_") && os.Getenv(k) == "" {
					os.Setenv(k, v)
				}
			}
		}
		for _, fn := range fns {
			h, err := st.Build(ctx, fn.LogicalID, nil)
			if err != nil {
				return nil, fmt.Errorf("%w (or run with --rie to use its bootstrap)", err)
			}
			invokers[fn.LogicalID] = lambdalocal.InProcess(h)
		}
		return invokers, nil
	}

	buildDir, err := os.MkdirTemp("", "hookinbox-dev-")
	if err != nil {
		return nil, err
	}
	d.defer_(func() { os.RemoveAll(buildDir) })
	d.logf("building %d functions for this host with make build-<LogicalId> (the first build takes a minute)", len(fns))
	// One after another: with a cold build cache, parallel builds compile
	// the same packages twice; with a warm one each takes a second.
	paths := make([]string, len(fns))
	for i, fn := range fns {
		begin := time.Now()
		p, err := devstack.BuildFunctionIn(ctx, d.buildDir, fn.LogicalID, filepath.Join(buildDir, fn.LogicalID))
		if err != nil {
			return nil, err
		}
		paths[i] = p
		d.logf("built %s in %s", fn.LogicalID, time.Since(begin).Round(100*time.Millisecond))
	}
	d.logf("starting the functions under aws-lambda-rie")
	for i, spec := range fns {
		fn, err := st.StartBootstrap(ctx, spec.LogicalID, paths[i], nil, d.childLog(spec.LogicalID))
		if err != nil {
			return nil, err
		}
		d.defer_(func() {
			if err := fn.Stop(); err != nil {
				d.logf("%s: %v", spec.LogicalID, err)
			}
		})
		invokers[spec.LogicalID] = fn
	}
	return invokers, nil
}

// wire connects each function to its events: HTTP API routes served by
// ServeHTTP, SQS event sources and schedules polling until the stack
// stops.
func (d *devStack) wire(ctx context.Context, st *pipeline.Stack, fns []pipeline.Function, invokers map[string]lambdalocal.Invoker) {
	pollCtx, stopPolling := context.WithCancel(context.WithoutCancel(ctx))
	var pollers sync.WaitGroup
	d.defer_(func() {
		stopPolling()
		pollers.Wait()
	})
	api := &lambdalocal.HTTPAPI{Log: d.errorLogger("http api")}
	sqsClient := st.Emulators.SQS()
	inboxItem := st.Inbox().Get
	for _, spec := range fns {
		fn := invokers[spec.LogicalID]
		for _, t := range spec.Triggers {
			switch t.Kind {
			case pipeline.TriggerHTTP:
				api.Routes = append(api.Routes, lambdalocal.Route{Method: t.Method, Path: t.Path, Function: fn})
				if strings.HasPrefix(t.Path, webhookPath) && d.verifiers == nil {
					if env, err := st.Env(spec.LogicalID, nil); err == nil {
						d.verifiers = deliveryVerifiers(env)
					}
				}
			case pipeline.TriggerSQS:
				env, _ := st.Env(spec.LogicalID, nil)
				src := &lambdalocal.SQSSource{
					Client: sqsClient, QueueURL: t.Queue.URL, QueueARN: t.Queue.ARN, Region: devstack.Region,
					BatchSize: t.BatchSize, Window: t.Window,
					Function: &batchLogger{d: d, fn: fn, id: spec.LogicalID, queue: t.Queue.Name, status: inboxItem, pointers: fetchPointers(ctx, env)},
					Log:      d.errorLogger(spec.LogicalID + " event source"),
				}
				pollers.Add(1)
				go func() { defer pollers.Done(); _ = src.Run(pollCtx) }()
			case pipeline.TriggerSchedule:
				sch := &lambdalocal.Schedule{
					Name: d.flags.stackName + "-" + spec.LogicalID + "-" + t.Name, Interval: t.Interval,
					Function: &scheduleLogger{d: d, fn: fn, id: spec.LogicalID, expr: t.Expression},
					Log:      d.errorLogger(spec.LogicalID + " schedule"),
				}
				pollers.Add(1)
				go func() { defer pollers.Done(); _ = sch.Run(pollCtx) }()
			}
		}
		if spec.LogicalID == "ReconcilerFunction" {
			d.reconciler.Store(&scheduleLogger{d: d, fn: fn, id: spec.LogicalID, expr: "hookinbox reconcile"})
		}
		for _, s := range spec.Skipped {
			d.logf("%s: not emulated: %s", spec.LogicalID, s)
		}
	}
	d.api.Store(api)
}

// ServeHTTP answers /healthz, and sends everything else to the HTTP API
// once the stack is ready, logging one line per request.
func (d *devStack) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		w.Header().Set("Content-Type", "application/json")
		if d.ready.Load() {
			_, _ = io.WriteString(w, `{"status":"ready"}`)
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"status":"starting"}`)
		return
	}
	api := d.api.Load()
	if !d.ready.Load() || api == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"message":"hookinbox dev is starting"}`)
		return
	}
	if r.URL.Path == reconcilePath && r.Method == http.MethodPost {
		d.reconcile(w, r)
		return
	}
	d.serveLogged(api, w, r)
}

// reconcile runs the ReconcilerFunction once, as its schedule does, and
// answers its summary (500 with the error when the run failed).
func (d *devStack) reconcile(w http.ResponseWriter, r *http.Request) {
	fn := d.reconciler.Load()
	if fn == nil {
		http.Error(w, "this stack has no ReconcilerFunction", http.StatusNotFound)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Minute) // the template's Timeout
	defer cancel()
	out, err := fn.Invoke(ctx, []byte(`{"source":"hookinbox.reconcile","detail-type":"Scheduled Event","detail":{}}`))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func (d *devStack) stateOf(root, baseURL string, st *pipeline.Stack, fns []pipeline.Function) (*devState, error) {
	mode := "in-process"
	if d.flags.rie {
		mode = "rie"
	}
	s := &devState{
		PID: os.Getpid(), StartedAt: time.Now().UTC(), Mode: mode,
		StackName: st.Name, Region: devstack.Region, Root: root,
		BaseURL: baseURL, WebhookURL: baseURL + "/webhooks/" + firstProvider().Name(), HealthURL: baseURL + "/healthz",
		WebhookSecret: d.flags.secret, Endpoints: st.Endpoints, Env: st.Emulators.EnvMap(),
		Tables: st.Tables, Buckets: st.Buckets, Queues: map[string]stateQueue{},
		MetricsFile: metricsFileFor(d.flags.stateFile),
	}
	s.Env["AWS_ENDPOINT_URL_SESV2"] = st.Endpoints["AWS_ENDPOINT_URL_SESV2"]
	// The AWS CLI v1 reads its region from AWS_DEFAULT_REGION only.
	s.Env["AWS_DEFAULT_REGION"] = devstack.Region
	for id, q := range st.Queues {
		s.Queues[id] = stateQueue{Name: q.Name, URL: q.URL, ARN: q.ARN}
	}
	for _, fn := range fns {
		env, err := st.Env(fn.LogicalID, nil)
		if err != nil {
			return nil, err
		}
		f := stateFunction{LogicalID: fn.LogicalID, Env: env}
		for _, t := range fn.Triggers {
			f.Triggers = append(f.Triggers, t.String())
		}
		s.Functions = append(s.Functions, f)
	}
	return s, nil
}

func (d *devStack) printBanner(s *devState, specs []pipeline.Function) {
	w := d.stdout
	mode := "in-process handlers (internal/local/catalog); --rie runs the real bootstraps"
	if d.flags.rie {
		mode = "bootstrap binaries under aws-lambda-rie"
	}
	fmt.Fprintf(w, "\nhookinbox local stack %q is ready: %s\n\n", s.StackName, mode)
	fmt.Fprintf(w, "  Webhook URL     %s\n", s.WebhookURL)
	fmt.Fprintf(w, "  Signing secret  %s   (local only)\n", s.WebhookSecret)
	fmt.Fprintf(w, "  Health          %s\n", s.HealthURL)
	fmt.Fprintf(w, "  State file      %s\n\n", d.flags.stateFile)
	fmt.Fprintln(w, "Functions:")
	for _, spec := range specs {
		var ts []string
		for _, t := range spec.Triggers {
			ts = append(ts, t.String())
		}
		if len(ts) == 0 {
			ts = []string{"no events; invoke it by hand"}
		}
		fmt.Fprintf(w, "  %-20s %s\n", spec.LogicalID, strings.Join(ts, "; "))
	}
	tables := make([]string, 0, len(s.Tables))
	for _, n := range s.Tables {
		tables = append(tables, n)
	}
	sort.Strings(tables)
	queues := make([]string, 0, len(s.Queues))
	for _, q := range s.Queues {
		queues = append(queues, q.Name)
	}
	sort.Strings(queues)
	fmt.Fprintf(w, "Tables: %s\nQueues: %s\n\n", strings.Join(tables, ", "), strings.Join(queues, ", "))

	stateArg := ""
	if d.flags.stateFile != defaultStateFile() {
		stateArg = " --state-file " + d.flags.stateFile
	}
	self, first := selfCommand(), firstProvider().Name()
	send := fmt.Sprintf("  %s send %s %s --times 3%s\n", self, first, d.sampleType, stateArg)
	_, shop := s.Tables["ShopTable"]
	if shop {
		fmt.Fprintln(w, "In another terminal, send the same event three times, then look at the shop:")
		fmt.Fprint(w, send)
		fmt.Fprintf(w, "  %s state%s\n", self, stateArg)
	} else {
		fmt.Fprintln(w, "In another terminal, send the same event three times, then inspect it (send prints its key):")
		fmt.Fprint(w, send)
		fmt.Fprintf(w, "  %s inspect '%s#<event id>'%s\n", self, first, stateArg)
	}
	if park, ok := pipeline.ParkExample(first); ok && shop {
		fmt.Fprintln(w, "Send one the shop cannot finish (it is parked: the console says why), then replay it from the browser:")
		fmt.Fprintf(w, "  %s send %s%s\n", self, park, stateArg)
	} else {
		fmt.Fprintln(w, "See the events in a browser, and replay the parked ones:")
	}
	fmt.Fprintf(w, "  %s console%s   (open the URL it prints: Events, the DEAD one, Replay)\n", self, stateArg)
	fmt.Fprintf(w, "From elsewhere: --url %s --secret %s\n\n", s.WebhookURL, s.WebhookSecret)
	printDestinations(w, d.destinations, d.flags.forward, d.flags.forwardSecret)

	fmt.Fprintln(w, "Point other tools (AWS CLI, SDKs) at the stack:")
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var exports []string
	for _, k := range keys {
		exports = append(exports, k+"="+s.Env[k])
	}
	fmt.Fprintf(w, "  export %s\n", strings.Join(exports, " "))
	if n, ok := s.Tables["InboxTable"]; ok {
		fmt.Fprintf(w, "  aws dynamodb scan --table-name %s\n", n)
	}
	fmt.Fprintln(w, "\nOne line per request or batch follows on stderr (--verbose adds the functions' logs). Ctrl-C stops everything.")
}

// functionLogger returns the slog logger an in-process function gets: its
// logs on stderr with --verbose, only its errors otherwise.
func (d *devStack) functionLogger(id string) *slog.Logger {
	level := slog.LevelError
	if d.flags.verbose {
		level = slog.LevelDebug
	}
	return slog.New(logs.Wrap(slog.NewTextHandler(&lineWriter{d: d, prefix: id + ": "}, &slog.HandlerOptions{Level: level})))
}

// errorLogger logs the local plumbing's own warnings and errors.
func (d *devStack) errorLogger(what string) *slog.Logger {
	return slog.New(slog.NewTextHandler(&lineWriter{d: d, prefix: what + ": "}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// childLog is where a child process's output goes: all of it with
// --verbose, only lines that look like errors otherwise.
func (d *devStack) childLog(id string) io.Writer {
	return &lineWriter{d: d, prefix: id + ": ", filter: !d.flags.verbose}
}

// lineWriter writes each complete line to the dev log under a prefix.
// With filter set it keeps only lines that carry an error level.
type lineWriter struct {
	d      *devStack
	prefix string
	filter bool
	mu     sync.Mutex
	buf    []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := strings.IndexByte(string(l.buf), '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(l.buf[:i]), "\r")
		l.buf = l.buf[i+1:]
		if line == "" || (l.filter && !looksLikeError(line)) {
			continue
		}
		l.d.logf("%s%s", l.prefix, line)
	}
	return len(p), nil
}

// looksLikeError reports whether a log line is at error level, in slog's
// JSON or text form.
func looksLikeError(line string) bool {
	return strings.Contains(line, `"level":"ERROR"`) || strings.Contains(line, "level=ERROR") || strings.Contains(line, "panic:")
}

var _ flag.Value = envFlag(nil)

package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
)

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
						d.verifiers = deliveryVerifiers(d.app.providers(), env)
					}
				}
			case pipeline.TriggerSQS:
				env, _ := st.Env(spec.LogicalID, nil)
				src := &lambdalocal.SQSSource{
					Client: sqsClient, QueueURL: t.Queue.URL, QueueARN: t.Queue.ARN, Region: devstack.Region,
					BatchSize: t.BatchSize, Window: t.Window,
					Function: &batchLogger{d: d, fn: fn, id: spec.LogicalID, queue: t.Queue.Name, status: inboxItem, pointers: fetchPointers(ctx, d.app.providers(), env)},
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

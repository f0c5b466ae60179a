package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hookinbox/hookinbox/internal/local/devstack"
	"github.com/hookinbox/hookinbox/internal/local/lambdalocal"
	"github.com/hookinbox/hookinbox/internal/local/pipeline"
	"github.com/hookinbox/hookinbox/internal/local/samtemplate"
	"github.com/hookinbox/hookinbox/provider"
)

// bootstrapTargets starts what `hookinbox load` measures by default: its
// own emulators, and for the receiver and the floor each a stack of its
// own on them and f.copies of its real bootstrap under aws-lambda-rie
// behind the HTTP API emulation on a loopback port (with --null, the
// floor in the receiver's place too, as "floor-a"). Both bootstraps get
// the receiver's environment from template.yaml (the floor reads only
// INBOX_TABLE and EVENTS_QUEUE_URL of it). The returned func stops it all.
func bootstrapTargets(ctx context.Context, f loadFlags, p provider.Provider) (targets []*loadTarget, stop func(), err error) {
	r := &bootstrapRig{f: f, p: p}
	// Every failure returns a nil stop: what started is stopped here.
	defer func() {
		if err != nil {
			r.stop()
		}
	}()
	tpl, bootstraps, err := r.build(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Warmed emulators start both targets even: cold, node spent two to
	// three times the CPU a request, charged to whichever target came
	// first.
	r.emu, err = devstack.Start(ctx, devstack.Options{Root: r.root, WarmUp: true})
	if err != nil {
		return nil, nil, err
	}
	r.cleanups = append(r.cleanups, func() { _ = r.emu.Stop() })
	for _, u := range []string{r.emu.DynamoDBURL, r.emu.SQSURL} {
		if err := requireLoopback(u); err != nil {
			return nil, nil, fmt.Errorf("the emulators' endpoint: %w", err)
		}
	}
	suffix := randomHex(4)
	for _, b := range bootstraps {
		tg, err := r.start(ctx, tpl, b.name, b.path, suffix)
		if err != nil {
			return nil, nil, err
		}
		targets = append(targets, tg)
	}
	return targets, r.stop, nil
}

// bootstrapRig is what bootstrapTargets starts.
type bootstrapRig struct {
	f        loadFlags
	p        provider.Provider
	root     string
	buildDir string // the bootstraps and their log files
	emu      *devstack.Emulators
	cleanups []func() // run last first by stop
}

// stop stops what the rig started, last first.
func (r *bootstrapRig) stop() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// loadBootstrap is a target's name and the path of its bootstrap.
type loadBootstrap struct{ name, path string }

// build loads template.yaml and builds the bootstraps of the two
// targets: the receiver's (the floor's with --null, as "floor-a") and
// the floor's (make build-floor).
func (r *bootstrapRig) build(ctx context.Context) (*samtemplate.Template, []loadBootstrap, error) {
	var err error
	if r.root, err = devstack.RepoRoot(""); err != nil {
		return nil, nil, err
	}
	tpl, err := samtemplate.Load(filepath.Join(r.root, "template.yaml"))
	if err != nil {
		return nil, nil, fmt.Errorf("load template: %w", err)
	}
	if r.buildDir, err = os.MkdirTemp("", "hookinbox-load-"); err != nil {
		return nil, nil, err
	}
	buildDir := r.buildDir
	r.cleanups = append(r.cleanups, func() { os.RemoveAll(buildDir) })
	floorBootstrap, err := devstack.BuildFunction(ctx, "floor", filepath.Join(buildDir, "floor"))
	if err != nil {
		return nil, nil, err
	}
	first := loadBootstrap{"floor-a", floorBootstrap}
	if !r.f.null {
		first.name = "receiver"
		if first.path, err = devstack.BuildFunction(ctx, "ReceiverFunction", filepath.Join(buildDir, "receiver")); err != nil {
			return nil, nil, err
		}
	}
	return tpl, []loadBootstrap{first, {"floor", floorBootstrap}}, nil
}

// start starts the target name: a stack of its own on the rig's
// emulators, f.copies of its bootstrap under aws-lambda-rie with the
// receiver's environment from tpl, and the HTTP API emulation in front of
// them on a loopback port.
func (r *bootstrapRig) start(ctx context.Context, tpl *samtemplate.Template, name, bootstrap, suffix string) (*loadTarget, error) {
	st, err := pipeline.Start(ctx, r.emu, pipeline.Options{Name: "load" + name + suffix, Template: tpl})
	if err != nil {
		return nil, fmt.Errorf("create the %s's tables and queues: %w", name, err)
	}
	r.cleanups = append(r.cleanups, func() { _ = st.Close() })
	env, err := st.Env("ReceiverFunction", loadEnv(r.f, r.p, name))
	if err != nil {
		return nil, err
	}
	pool, err := r.startCopies(ctx, name, bootstrap, env)
	if err != nil {
		return nil, err
	}
	api := &lambdalocal.HTTPAPI{Routes: []lambdalocal.Route{{Method: r.p.Webhook().HTTPMethod(), Path: webhookPath + "{provider}", Function: pool}}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	r.cleanups = append(r.cleanups, func() { _ = srv.Close() })
	emu := r.emu
	cpu := func() (cpuTimes, error) {
		c, err := pool.cpuTime()
		emuCPU, eerr := emu.CPUTime()
		c.emulators = emuCPU
		load, lerr := devstack.ProcessCPU(os.Getpid())
		c.load = load
		machine, merr := devstack.MachineCPU()
		c.machine = machine
		return c, errors.Join(err, eerr, lerr, merr)
	}
	return &loadTarget{name: name, url: "http://" + ln.Addr().String() + webhookPath + r.p.Name(), cpu: cpu}, nil
}

// startCopies starts f.copies of the target name's bootstrap with env.
// The copies write their output (the functions' log lines) to a file,
// not through a pipe into this process: in Lambda the platform ships
// them, and copying them here would take CPU from the targets in
// proportion to how much each logs.
func (r *bootstrapRig) startCopies(ctx context.Context, name, bootstrap string, env map[string]string) (*functionPool, error) {
	logFile, err := os.Create(filepath.Join(r.buildDir, name+".log"))
	if err != nil {
		return nil, err
	}
	r.cleanups = append(r.cleanups, func() { _ = logFile.Close() })
	pool := &functionPool{idle: make(chan *devstack.Function, r.f.copies)}
	for i := 0; i < r.f.copies; i++ {
		fn, err := devstack.StartFunction(ctx, bootstrap, env, devstack.Options{Root: r.root, Stdout: logFile})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r.cleanups = append(r.cleanups, func() { _ = fn.Stop() })
		pool.all = append(pool.all, fn)
		pool.idle <- fn
	}
	return pool, nil
}

// loadEnv is what a target's bootstrap gets over the receiver's environment
// from template.yaml: p's signing secret, a function name of its own, and
// every --env, in order (a later one wins).
func loadEnv(f loadFlags, p provider.Provider, target string) map[string]string {
	env := map[string]string{p.Webhook().SecretEnv: f.secret, "AWS_LAMBDA_FUNCTION_NAME": "load-" + target}
	for _, kv := range f.env {
		name, value, _ := strings.Cut(kv, "=")
		env[name] = value
	}
	return env
}

// functionPool sends each invocation to an idle copy of a function,
// waiting for one when all are busy, as Lambda's concurrency limit does.
type functionPool struct {
	all  []*devstack.Function
	idle chan *devstack.Function
}

// Invoke implements lambdalocal.Invoker.
func (p *functionPool) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	select {
	case fn := <-p.idle:
		defer func() { p.idle <- fn }()
		return fn.Invoke(ctx, payload)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// cpuTime sums the CPU time of every copy's bootstrap and RIE.
func (p *functionPool) cpuTime() (cpuTimes, error) {
	var sum cpuTimes
	var errs []error
	for _, fn := range p.all {
		rie, bootstrap, err := fn.CPUTime()
		errs = append(errs, err)
		sum.rie += rie
		sum.function += bootstrap
	}
	return sum, errors.Join(errs...)
}

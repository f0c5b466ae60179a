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
	var cleanups []func()
	stopAll := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	// Every failure returns a nil stop: what started is stopped here.
	defer func() {
		if err != nil {
			stopAll()
		}
	}()

	root, err := devstack.RepoRoot("")
	if err != nil {
		return nil, nil, err
	}
	tpl, err := samtemplate.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		return nil, nil, fmt.Errorf("load template: %w", err)
	}
	buildDir, err := os.MkdirTemp("", "hookinbox-load-")
	if err != nil {
		return nil, nil, err
	}
	cleanups = append(cleanups, func() { os.RemoveAll(buildDir) })
	floorBootstrap, err := devstack.BuildFunction(ctx, "floor", filepath.Join(buildDir, "floor")) // make build-floor
	if err != nil {
		return nil, nil, err
	}
	first := struct{ name, bootstrap string }{"floor-a", floorBootstrap}
	if !f.null {
		first.name = "receiver"
		first.bootstrap, err = devstack.BuildFunction(ctx, "ReceiverFunction", filepath.Join(buildDir, "receiver"))
		if err != nil {
			return nil, nil, err
		}
	}

	// Warmed emulators start both targets even: cold, node spent two to
	// three times the CPU a request, charged to whichever target came
	// first.
	emu, err := devstack.Start(ctx, devstack.Options{Root: root, WarmUp: true})
	if err != nil {
		return nil, nil, err
	}
	cleanups = append(cleanups, func() { _ = emu.Stop() })
	for _, u := range []string{emu.DynamoDBURL, emu.SQSURL} {
		if err := requireLoopback(u); err != nil {
			return nil, nil, fmt.Errorf("the emulators' endpoint: %w", err)
		}
	}

	suffix := randomHex(4)
	for _, t := range []struct{ name, bootstrap string }{first, {"floor", floorBootstrap}} {
		st, err := pipeline.Start(ctx, emu, pipeline.Options{Name: "load" + t.name + suffix, Template: tpl})
		if err != nil {
			return nil, nil, fmt.Errorf("create the %s's tables and queues: %w", t.name, err)
		}
		cleanups = append(cleanups, func() { _ = st.Close() })
		env, err := st.Env("ReceiverFunction", loadEnv(f, p, t.name))
		if err != nil {
			return nil, nil, err
		}

		// The copies write their output (the functions' log lines) to a
		// file, not through a pipe into this process: in Lambda the
		// platform ships them, and copying them here would take CPU from
		// the targets in proportion to how much each logs.
		logFile, err := os.Create(filepath.Join(buildDir, t.name+".log"))
		if err != nil {
			return nil, nil, err
		}
		cleanups = append(cleanups, func() { _ = logFile.Close() })
		pool := &functionPool{idle: make(chan *devstack.Function, f.copies)}
		for i := 0; i < f.copies; i++ {
			fn, err := devstack.StartFunction(ctx, t.bootstrap, env, devstack.Options{Root: root, Stdout: logFile})
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", t.name, err)
			}
			cleanups = append(cleanups, func() { _ = fn.Stop() })
			pool.all = append(pool.all, fn)
			pool.idle <- fn
		}
		api := &lambdalocal.HTTPAPI{Routes: []lambdalocal.Route{{Method: p.Webhook().HTTPMethod(), Path: webhookPath + "{provider}", Function: pool}}}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, err
		}
		srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		cleanups = append(cleanups, func() { _ = srv.Close() })
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
		targets = append(targets, &loadTarget{name: t.name, url: "http://" + ln.Addr().String() + webhookPath + p.Name(), cpu: cpu})
	}
	return targets, stopAll, nil
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

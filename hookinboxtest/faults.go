package hookinboxtest

import (
	"context"
	"errors"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

// errInjected is the failure CheckOnce makes an attempt end with: a
// transient error, which the processor retries.
var errInjected = errors.New("hookinboxtest: injected failure")

// faults makes the next attempt of the business fail after a number of
// effects, once. Disarmed (failAt < 0) it only watches: it keeps the
// effect names of the last attempt.
type faults struct {
	mu     sync.Mutex
	failAt int      // fail the attempt after this many effects; -1: none
	fired  bool     // the armed failure happened
	last   []string // effects the last attempt ran or found recorded, in order
	reg    *provider.Registry
}

// arm makes the next attempt fail after n effects.
func (f *faults) arm(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failAt, f.fired = n, false
}

// state returns whether the armed failure happened and the effects of the
// last attempt.
func (f *faults) state() (fired bool, last []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired, append([]string(nil), f.last...)
}

// wrap returns b's builder with the business wrapped in f.
func (f *faults) wrap(b processorfn.BusinessBuilder) processorfn.BusinessBuilder {
	return func(ctx context.Context, cfg aws.Config, getenv func(string) string) (processorfn.Business, error) {
		inner, err := b(ctx, cfg, getenv)
		if err != nil {
			return nil, err
		}
		return &faultyBusiness{inner: inner, f: f}, nil
	}
}

// faultyBusiness runs the business with its effects counted, failing an
// attempt where f is armed.
type faultyBusiness struct {
	inner processorfn.Business
	f     *faults
}

// Handles delegates to the business's Handles, or says what the
// processor's metrics say without one.
func (b *faultyBusiness) Handles(provider, eventType string) bool {
	if h, ok := b.inner.(interface{ Handles(string, string) bool }); ok {
		return h.Handles(provider, eventType)
	}
	return b.f.reg.TypeBounded(provider, eventType)
}

// Handle runs the business's Handle with fx counted. An armed failure at
// n effects fails the (n+1)-th effect without running it, or, when the
// business runs only n, the attempt after Handle returned: as a crash
// there would.
func (b *faultyBusiness) Handle(ctx context.Context, ev webhook.Event, fx effects.Runner) error {
	b.f.mu.Lock()
	r := &faultRunner{inner: fx, failAt: b.f.failAt}
	b.f.failAt = -1
	b.f.mu.Unlock()
	err := b.inner.Handle(ctx, ev, r)
	r.mu.Lock()
	fired := r.fired || (r.failAt >= 0 && len(r.names) == r.failAt)
	names := r.names
	r.mu.Unlock()
	b.f.mu.Lock()
	b.f.last = names
	if fired {
		b.f.fired = true
	} else if r.failAt >= 0 {
		b.f.failAt = r.failAt // this attempt ran fewer effects: keep it armed
	}
	b.f.mu.Unlock()
	if fired {
		return errInjected
	}
	return err
}

// faultRunner is a Runner that counts the effects it runs and fails every
// one after the first failAt.
type faultRunner struct {
	inner  effects.Runner
	mu     sync.Mutex
	failAt int
	fired  bool
	names  []string
}

func (r *faultRunner) gate() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fired || (r.failAt >= 0 && len(r.names) == r.failAt) {
		r.fired = true
		return errInjected
	}
	return nil
}

func (r *faultRunner) done(name string, err error) error {
	if err == nil {
		r.mu.Lock()
		r.names = append(r.names, name)
		r.mu.Unlock()
	}
	return err
}

// Run implements effects.Runner.
func (r *faultRunner) Run(ctx context.Context, e effects.Effect) error {
	if err := r.gate(); err != nil {
		return err
	}
	return r.done(e.Name, r.inner.Run(ctx, e))
}

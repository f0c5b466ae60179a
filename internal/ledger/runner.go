package ledger

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

type ledgerRunner struct {
	l       *Ledger
	key     webhook.Key
	attempt string // tells this runner's intents from every other's

	mu      sync.Mutex
	loaded  bool
	done    map[string]bool
	intents map[string]intent // at-most-once effects started and not finished
	locks   map[string]*sync.Mutex
}

// intent is an at-most-once effect some attempt started.
type intent struct {
	attempt string
	started time.Time
}

func (r *ledgerRunner) Run(ctx context.Context, e effects.Effect) error {
	if err := check(e, r.key); err != nil {
		return err
	}
	if e.AtMostOnce {
		return r.atMostOnce(ctx, e.Name, e.Fn)
	}
	return r.atLeastOnce(ctx, e.Name, e.Fn)
}

// atLeastOnce runs fn unless it is recorded, and records it.
func (r *ledgerRunner) atLeastOnce(ctx context.Context, name string, fn func(context.Context, string) (string, error)) error {
	unlock, done, _, err := r.begin(ctx, name)
	defer unlock()
	if err != nil || done {
		return err
	}
	ik := effects.IdempotencyKey(r.key, name)
	res, err := fn(ctx, ik)
	if err != nil {
		return fmt.Errorf("effect %s of %s: %w", name, r.key, err)
	}
	rec := effects.Record{Effect: name, Key: r.key, IdempotencyKey: ik, Result: res}
	rctx, cancel := recordContext(ctx)
	defer cancel()
	if err := persist(rctx, func(ctx context.Context) error { return r.l.record(ctx, rec) }); err != nil {
		return err
	}
	r.finished(name)
	return nil
}

// atMostOnce runs fn behind an intent (effects.AtMostOnce).
func (r *ledgerRunner) atMostOnce(ctx context.Context, name string, fn func(context.Context, string) (string, error)) error {
	unlock, done, in, err := r.begin(ctx, name)
	defer unlock()
	switch {
	case err != nil || done:
		return err
	case in.attempt != "" && in.attempt != r.attempt:
		return outcomeUnknown(r.key, name, in.started, nil)
	}
	ik := effects.IdempotencyKey(r.key, name)
	rec := effects.Record{Effect: name, Key: r.key, IdempotencyKey: ik}
	var applied bool
	err = persist(ctx, func(ctx context.Context) (err error) {
		applied, err = r.l.intend(ctx, rec, r.attempt)
		return err
	})
	switch {
	case err != nil:
		// The intent may be stored (a write applied whose answer was
		// lost) although fn was never called: release it, or the next
		// attempt would take the email for one that may have gone out.
		return r.unstarted(ctx, rec, err)
	case !applied:
		// Another attempt's record or intent appeared after this runner
		// read the ledger: this attempt lost its lease.
		return fmt.Errorf("effect %s of %s: another attempt started or recorded it meanwhile", name, r.key)
	}
	r.mu.Lock()
	r.intents[name] = intent{attempt: r.attempt, started: r.l.now()}
	r.mu.Unlock()
	if cerr := ctx.Err(); cerr != nil {
		// The effect's time ran out while the intent was written: fn is
		// not called, so nothing was sent.
		return r.unstarted(ctx, rec, fmt.Errorf("effect %s of %s: not started: %w", name, r.key, cerr))
	}

	res, err := fn(ctx, ik)
	rctx, cancel := recordContext(ctx)
	defer cancel()
	switch {
	case err != nil && effects.IsNotDone(err):
		if rerr := persist(rctx, func(ctx context.Context) error { return r.l.release(ctx, rec, r.attempt) }); rerr != nil {
			// The intent stays: the next attempt cannot tell and parks the event.
			return fmt.Errorf("effect %s of %s: %w (and its start could not be released: %v)", name, r.key, err, rerr)
		}
		r.mu.Lock()
		delete(r.intents, name)
		r.mu.Unlock()
		return fmt.Errorf("effect %s of %s: %w", name, r.key, err)
	case err != nil:
		return outcomeUnknown(r.key, name, time.Time{}, err)
	}
	rec.Result = res
	if err := persist(rctx, func(ctx context.Context) error { return r.l.recordOwn(ctx, rec, r.attempt) }); err != nil {
		return fmt.Errorf("effect %s of %s ran, but its outcome could not be recorded; the next attempt parks the event instead of repeating it: %w", name, r.key, err)
	}
	r.finished(name)
	return nil
}

// unstarted releases this attempt's intent for rec, which may or may not
// be stored, when fn was not called, and returns err: the next attempt
// then runs the effect. If the release fails too, the intent may stay and
// the next attempt parks the event (it cannot tell).
func (r *ledgerRunner) unstarted(ctx context.Context, rec effects.Record, err error) error {
	rctx, cancel := recordContext(ctx)
	defer cancel()
	if rerr := persist(rctx, func(ctx context.Context) error { return r.l.release(ctx, rec, r.attempt) }); rerr != nil {
		return fmt.Errorf("%w (and its start could not be released: %v)", err, rerr)
	}
	r.mu.Lock()
	delete(r.intents, rec.Effect)
	r.mu.Unlock()
	return err
}

// finished notes that effect name is recorded.
func (r *ledgerRunner) finished(name string) {
	r.mu.Lock()
	r.done[name] = true
	delete(r.intents, name)
	r.mu.Unlock()
}

// begin takes the lock of effect name, which the caller holds until the
// effect is recorded or has failed (unlock releases it), and reports
// whether the effect is recorded and its open intent.
func (r *ledgerRunner) begin(ctx context.Context, name string) (unlock func(), done bool, in intent, err error) {
	lock := r.lock(name)
	lock.Lock()
	done, in, err = r.state(ctx, name)
	return lock.Unlock, done, in, err
}

// lock returns the mutex that serializes the Runner's calls for one effect.
func (r *ledgerRunner) lock(name string) *sync.Mutex {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.locks[name]
	if !ok {
		m = new(sync.Mutex)
		r.locks[name] = m
	}
	return m
}

// state reports whether effect name is recorded, and its intent if one is
// open, loading the event's ledger on first use.
func (r *ledgerRunner) state(ctx context.Context, name string) (done bool, in intent, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.loaded {
		items, err := r.l.items(ctx, r.key)
		if err != nil {
			return false, intent{}, err
		}
		r.loaded = true
		for _, it := range items {
			effect := attrString(it, "effect")
			switch attrString(it, attrState) {
			case "":
				r.done[effect] = true
			case stateStarted:
				started, _ := time.Parse(time.RFC3339Nano, attrString(it, attrStartedAt))
				r.intents[effect] = intent{attempt: attrString(it, attrAttempt), started: started}
			}
		}
	}
	return r.done[name], r.intents[name], nil
}

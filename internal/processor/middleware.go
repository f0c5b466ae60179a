package processor

import (
	"context"

	"github.com/hookinbox/hookinbox/effects"
)

// effectFunc is what an effect does (effects.Effect's Fn).
type effectFunc = func(ctx context.Context, idempotencyKey string) (result string, err error)

// middleware wraps the function of an effect named name: it may bound,
// time or refuse the call, while the effect's name and guarantee pass
// through unchanged.
type middleware func(name string, next effectFunc) effectFunc

// withMiddleware returns a Runner that runs every effect through r with
// its function wrapped by mw, the first outermost: a wrapper that passes
// the Effect on, so it cannot change how the effect runs (an at-most-once
// effect stays at most once).
func withMiddleware(r effects.Runner, mw ...middleware) effects.Runner {
	return wrapped{r, mw}
}

type wrapped struct {
	r  effects.Runner
	mw []middleware
}

func (w wrapped) Run(ctx context.Context, e effects.Effect) error {
	for i := len(w.mw) - 1; i >= 0 && e.Fn != nil; i-- {
		e.Fn = w.mw[i](e.Name, e.Fn)
	}
	return w.r.Run(ctx, e)
}

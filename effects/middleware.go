package effects

import "context"

// Middleware wraps the function of an effect named name: it may bound,
// time or refuse the call, while the effect's name and guarantee pass
// through unchanged.
type Middleware func(name string, next Func) Func

// With returns a Runner that runs every effect through r with its
// function wrapped by mw, the first outermost.
func With(r Runner, mw ...Middleware) Runner {
	return wrapped{r, mw}
}

type wrapped struct {
	r  Runner
	mw []Middleware
}

func (w wrapped) Run(ctx context.Context, e Effect) error {
	for i := len(w.mw) - 1; i >= 0 && e.Fn != nil; i-- {
		e.Fn = w.mw[i](e.Name, e.Fn)
	}
	return w.r.Run(ctx, e)
}

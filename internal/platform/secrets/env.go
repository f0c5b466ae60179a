package secrets

import (
	"context"
	"fmt"
	"time"

	"github.com/hookinbox/hookinbox/provider"
)

// Loader returns how a function loads the secrets its providers ask env
// for (provider.Env.LoadSecret): the values inline in the variable name
// (Parse), or else in the Secrets Manager secret name+"_ARN" names (List),
// kept fresh as a Rotating with maxAge and minInterval (zero takes the
// defaults), and loaded now unless onUse.
func Loader(env *provider.Env, maxAge, minInterval time.Duration) func(ctx context.Context, name string, onUse bool) (provider.Secret, error) {
	return func(ctx context.Context, name string, onUse bool) (provider.Secret, error) {
		inline, err := Parse(env.Get(name))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		arn := env.Get(name + "_ARN")
		if len(inline) == 0 && arn == "" {
			return nil, nil
		}
		load := func(context.Context) ([]string, error) { return inline, nil }
		if len(inline) == 0 {
			sm := env.SecretsManager()
			load = func(ctx context.Context) ([]string, error) { return List(ctx, sm, arn) }
		}
		r := &Rotating{Load: load, MaxAge: maxAge, MinInterval: minInterval, Now: env.Now}
		if !onUse || len(inline) > 0 {
			if err := r.Init(ctx); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		return r, nil
	}
}

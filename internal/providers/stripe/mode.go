package stripe

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hookinbox/hookinbox/provider"
)

// mode returns the mode the deployment runs Stripe in: STRIPE_LIVEMODE
// ("true" or "false"), or else the mode of the key the processor loaded
// (sk_live_ or rk_live_ live, sk_test_ or rk_test_ test); with neither,
// Stripe's mode is not checked.
func mode(ctx context.Context, env *provider.Env, key provider.Secret) (provider.Mode, error) {
	switch v := env.Get("STRIPE_LIVEMODE"); v {
	case "true":
		return provider.ModeLive, nil
	case "false":
		return provider.ModeTest, nil
	case "":
	default:
		return 0, fmt.Errorf("want STRIPE_LIVEMODE (%q) true, false or empty", v)
	}
	if key == nil {
		return provider.ModeUnchecked, nil
	}
	vals, err := key.Values(ctx)
	if err != nil {
		return 0, fmt.Errorf("stripe key: %w", err)
	}
	for _, p := range []struct {
		prefix string
		mode   provider.Mode
	}{{"sk_live_", provider.ModeLive}, {"rk_live_", provider.ModeLive}, {"sk_test_", provider.ModeTest}, {"rk_test_", provider.ModeTest}} {
		if strings.HasPrefix(vals[0], p.prefix) {
			return p.mode, nil
		}
	}
	return 0, errors.New("set STRIPE_LIVEMODE to true or false: the Stripe key starts with none of sk_live_, rk_live_, sk_test_ and rk_test_")
}

package processorfn

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hookinbox/hookinbox/provider/adyen"
	"github.com/hookinbox/hookinbox/provider/stripe"
)

// stripeKeyValue returns the Stripe key the processor loaded
// (stripe.KeyFromContext), or "" when none is set.
func stripeKeyValue(ctx context.Context) (string, error) {
	key, err := stripe.KeyFromContext(ctx)
	if err != nil || key == nil {
		return "", err
	}
	vals, err := key.Values(ctx)
	if err != nil {
		return "", fmt.Errorf("stripe key: %w", err)
	}
	return vals[0], nil
}

// liveModes returns the mode the deployment runs for the providers whose
// events carry one (processor.Config.Live): Stripe's is STRIPE_LIVEMODE,
// or else the Stripe key's (sk_live_ or rk_live_ live, sk_test_ or
// rk_test_ test); Adyen's is ADYEN_LIVE, or else Stripe's. stripeKey is
// the key the processor loaded. A deployment with neither setting nor key
// checks no mode: it does not call Stripe, and Adyen's mode needs ADYEN_LIVE.
func liveModes(s settings, stripeKey string) (map[string]bool, error) {
	if s.StripeLivemode == "" && stripeKey == "" {
		if live, ok := parseMode(s.AdyenLive); ok {
			return map[string]bool{adyen.Name: live}, nil
		}
		return map[string]bool{}, nil
	}
	stripeLive, _ := parseMode(s.StripeLivemode)
	if s.StripeLivemode == "" {
		var ok bool
		if stripeLive, ok = keyMode(stripeKey); !ok {
			return nil, errors.New("set STRIPE_LIVEMODE to true or false: the Stripe key starts with none of sk_live_, rk_live_, sk_test_ and rk_test_")
		}
	}
	adyenLive := stripeLive
	if s.AdyenLive != "" {
		adyenLive, _ = parseMode(s.AdyenLive)
	}
	return map[string]bool{stripe.Name: stripeLive, adyen.Name: adyenLive}, nil
}

// parseMode reads "true" or "false"; ok is false for anything else.
func parseMode(v string) (live, ok bool) {
	switch v {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// keyMode tells a Stripe key's mode by its prefix: a secret key (sk_) or
// a restricted key (rk_), live or test.
func keyMode(key string) (live, ok bool) {
	for _, p := range []struct {
		prefix string
		live   bool
	}{{"sk_live_", true}, {"rk_live_", true}, {"sk_test_", false}, {"rk_test_", false}} {
		if strings.HasPrefix(key, p.prefix) {
			return p.live, true
		}
	}
	return false, false
}

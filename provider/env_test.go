package provider

import (
	"context"
	"slices"
	"testing"
)

// TestEnvSecrets: without LoadSecret an Env reads inline values only, and
// refuses a Secrets Manager secret rather than ignore it; with it, each
// secret is loaded once.
func TestEnvSecrets(t *testing.T) {
	ctx := context.Background()
	vars := map[string]string{"A": "one, two", "B_ARN": "arn:aws:secretsmanager:eu-west-1:1:secret:b"}
	env := &Env{Getenv: func(k string) string { return vars[k] }}
	a, err := env.Secret(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Values(ctx); !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("A = %q, want one and two", got)
	}
	if _, err := env.Secret(ctx, "B"); err == nil {
		t.Error("B_ARN without LoadSecret: no error")
	}
	if s, err := env.Secret(ctx, "C"); s != nil || err != nil {
		t.Errorf("C, unset = %v, %v; want none", s, err)
	}
	loads := 0
	env = &Env{Getenv: env.Getenv, LoadSecret: func(context.Context, string, bool) (Secret, error) {
		loads++
		return inline{"x"}, nil
	}}
	for range 2 {
		if _, err := env.Secret(ctx, "B"); err != nil {
			t.Fatal(err)
		}
	}
	if loads != 1 {
		t.Errorf("B loaded %d times, want once", loads)
	}
}

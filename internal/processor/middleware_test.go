package processor

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/effects"
	"github.com/hookinbox/hookinbox/webhook"
)

// trace is a middleware that notes when it enters and leaves.
func trace(label string, calls *[]string) middleware {
	return func(name string, next effectFunc) effectFunc {
		return func(ctx context.Context, ik string) (string, error) {
			*calls = append(*calls, label+">"+name)
			res, err := next(ctx, ik)
			*calls = append(*calls, label+"<"+name)
			return res, err
		}
	}
}

// TestMiddlewareKeepsHowTheEffectRuns: a Runner wrapped with middleware runs
// each effect as its caller asked: an at-most-once effect whose call
// failed stays unknown and is not called again, a plain one runs again.
func TestMiddlewareKeepsHowTheEffectRuns(t *testing.T) {
	tests := []struct {
		name      string
		run       func(ctx context.Context, r effects.Runner, fn effectFunc) error
		wantCalls int
		wantErr   error
	}{
		{"at most once", func(ctx context.Context, r effects.Runner, fn effectFunc) error {
			return effects.AtMostOnce(ctx, r, "email", fn)
		}, 1, effects.ErrOutcomeUnknown},
		{"with a result", func(ctx context.Context, r effects.Runner, fn effectFunc) error {
			return effects.DoResult(ctx, r, "email", fn)
		}, 2, nil},
		{"plain", func(ctx context.Context, r effects.Runner, fn effectFunc) error {
			return effects.Do(ctx, r, "email", func(ctx context.Context, ik string) error { _, err := fn(ctx, ik); return err })
		}, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, key := effects.NewMemoryLedger(), webhook.NewKey("stripe", "evt_mw")
			var calls []string
			n := 0
			fn := func(context.Context, string) (string, error) { n++; return "", errors.New("connection reset") }
			for range 2 {
				_ = tt.run(context.Background(), withMiddleware(l.For(key), trace("outer", &calls), trace("inner", &calls)), fn)
			}
			err := tt.run(context.Background(), l.For(key), func(context.Context, string) (string, error) { return "", nil })
			if n != tt.wantCalls || !errors.Is(err, tt.wantErr) {
				t.Errorf("calls %d, then err %v; want %d, %v", n, err, tt.wantCalls, tt.wantErr)
			}
			want := []string{"outer>email", "inner>email", "inner<email", "outer<email"}
			if diff := cmp.Diff(want, calls[:4]); diff != "" {
				t.Errorf("middleware order (-want +got):\n%s", diff)
			}
		})
	}
}

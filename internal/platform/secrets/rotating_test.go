package secrets

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRotating(t *testing.T) {
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	stored, loads := []string{"k1"}, 0
	var fail error
	r := &Rotating{
		Load: func(context.Context) ([]string, error) {
			loads++
			return stored, fail
		},
		Now: func() time.Time { return clock },
	}
	ctx := context.Background()
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	values := func() []string {
		t.Helper()
		v, err := r.Values(ctx)
		if err != nil {
			t.Fatalf("Values: %v", err)
		}
		return v
	}

	stored = []string{"k2"}
	if got := values(); !cmp.Equal(got, []string{"k1"}) || loads != 1 {
		t.Errorf("within the max age: %v after %d loads, want [k1] after 1", got, loads)
	}
	// A refusal within MinInterval of the last load loads nothing.
	if got, changed, err := r.Refresh(ctx, []string{"k1"}); changed || err != nil || !cmp.Equal(got, []string{"k1"}) || loads != 1 {
		t.Errorf("early Refresh = %v, %t, %v after %d loads; want [k1], false, nil after 1", got, changed, err, loads)
	}
	clock = clock.Add(DefaultMinInterval)
	if got, changed, err := r.Refresh(ctx, []string{"k1"}); !changed || err != nil || !cmp.Equal(got, []string{"k2"}) || loads != 2 {
		t.Errorf("Refresh = %v, %t, %v after %d loads; want [k2], true, nil after 2", got, changed, err, loads)
	}
	// Another caller still holding k1 gets k2 without a load.
	if got, changed, _ := r.Refresh(ctx, []string{"k1"}); !changed || !cmp.Equal(got, []string{"k2"}) || loads != 2 {
		t.Errorf("second Refresh = %v, %t after %d loads; want [k2], true after 2", got, changed, loads)
	}
	// The max age reloads without being asked.
	stored = []string{"k3"}
	clock = clock.Add(DefaultMaxAge)
	if got := values(); !cmp.Equal(got, []string{"k3"}) || loads != 3 {
		t.Errorf("after the max age: %v after %d loads, want [k3] after 3", got, loads)
	}
	// Past the max age with Secrets Manager failing: an error, not k3.
	fail = errors.New("AccessDeniedException")
	clock = clock.Add(DefaultMaxAge)
	if got, err := r.Values(ctx); !errors.Is(err, ErrStale) || got != nil {
		t.Errorf("stale and failing: %v, %v; want ErrStale", got, err)
	}
	if _, err := r.Values(ctx); !errors.Is(err, ErrStale) || loads != 4 {
		t.Errorf("stale within MinInterval: %v after %d loads; want ErrStale after 4", err, loads)
	}
	fail = nil
	clock = clock.Add(DefaultMinInterval)
	if got := values(); !cmp.Equal(got, []string{"k3"}) || loads != 5 {
		t.Errorf("recovered: %v after %d loads, want [k3] after 5", got, loads)
	}
}

// A max age below MinInterval reloads at every use: MinInterval throttles
// only loads after a failure or a refusal, never a due age reload.
func TestRotatingMaxAgeBelowMinInterval(t *testing.T) {
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	loads := 0
	r := &Rotating{
		Load:   func(context.Context) ([]string, error) { loads++; return []string{"k"}, nil },
		MaxAge: time.Second,
		Now:    func() time.Time { return clock },
	}
	for i := range 3 {
		clock = clock.Add(time.Second)
		if _, err := r.Values(context.Background()); err != nil || loads != i+1 {
			t.Fatalf("use %d: %v after %d loads, want nil after %d", i+1, err, loads, i+1)
		}
	}
}

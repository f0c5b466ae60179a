package secretstest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStatic(t *testing.T) {
	r := Static("a", "b")
	got, err := r.Values(context.Background())
	if err != nil || !cmp.Equal(got, []string{"a", "b"}) {
		t.Errorf("Values = %v, %v; want [a b]", got, err)
	}
	if _, changed, err := r.Refresh(context.Background(), got); changed || err != nil {
		t.Errorf("Refresh = changed %t, %v; want unchanged", changed, err)
	}
}

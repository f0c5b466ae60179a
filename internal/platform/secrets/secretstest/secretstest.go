// Package secretstest holds secrets helpers for tests.
package secretstest

import (
	"context"
	"slices"

	"github.com/hookinbox/hookinbox/internal/platform/secrets"
)

// Static returns a Rotating whose values are vals and never change.
func Static(vals ...string) *secrets.Rotating {
	vals = slices.Clone(vals)
	return &secrets.Rotating{Load: func(context.Context) ([]string, error) { return vals, nil }}
}

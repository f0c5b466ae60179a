// Package reconcilerfn runs hookinbox's scheduled reconciler Lambda with
// your own providers beside hookinbox's: it re-enqueues stuck claims and
// claims what each provider's reconcile source
// (provider.Provider.Reconciler) lists as never delivered. A reconciler
// main is one line:
//
//	func main() { reconcilerfn.Run(warehouse.Provider{}) }
//
// It is part of hookinbox's public API (see the CHANGELOG for changes
// within v0.x).
package reconcilerfn

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/internal/lambdafn"
	internal "github.com/hookinbox/hookinbox/internal/lambdafn/reconcilerfn"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/builtin"
)

// Run is the whole main of a reconciler Lambda of hookinbox's providers
// and the team's: JSON logs, the default AWS config, the handler,
// lambda.Start. A function that cannot start logs why and exits 1.
func Run(providers ...provider.Provider) { lambdafn.Main(builder(providers...)) }

// builder returns the reconciler's builder with hookinbox's providers and
// the team's.
func builder(providers ...provider.Provider) lambdafn.Builder {
	return func(ctx context.Context, cfg aws.Config, getenv func(string) string, log *slog.Logger) (any, error) {
		reg, err := builtin.Registry(providers...)
		if err != nil {
			return nil, err
		}
		return internal.Builder(reg)(ctx, cfg, getenv, log)
	}
}

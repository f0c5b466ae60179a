// Package receiverfn runs hookinbox's webhook receiver Lambda with your
// own providers beside hookinbox's: it verifies each delivery, claims it
// once in the inbox and hands it to the events queue. A receiver main is
// one line:
//
//	func main() { receiverfn.Run(warehouse.Provider{}) }
//
// Each provider is enabled when its secret variable
// (provider.Webhook.SecretEnv, or that name with _ARN) is set in the
// function's environment. It is part of hookinbox's public API (see the
// CHANGELOG for changes within v0.x).
package receiverfn

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookinbox/hookinbox/internal/lambdafn"
	internal "github.com/hookinbox/hookinbox/internal/lambdafn/receiverfn"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/provider/builtin"
)

// Run is the whole main of a receiver Lambda speaking hookinbox's
// providers and the team's: JSON logs, the default AWS config, the
// handler, lambda.Start. A function that cannot start logs why and exits
// 1.
func Run(providers ...provider.Provider) { lambdafn.Main(builder(providers...)) }

// builder returns the receiver's builder with hookinbox's providers and
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

// Package catalog maps each AWS::Serverless::Function of template.yaml to
// its builder. It links every function, so only what runs them all imports
// it: `hookinbox dev` and the tests. A function's bootstrap imports its own
// builder package instead and links nothing of the others.
package catalog

import (
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/receiverfn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/reconcilerfn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/replayfn"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/provider/stripe/eventbridge"
)

// Builders maps each function's logical ID in template.yaml to its builder.
var Builders = map[string]lambdafn.Builder{
	"ReceiverFunction":   receiverfn.Build,
	"ProcessorFunction":  processorfn.Builder(shop.FromEnvIfSet),
	"DlqReplayFunction":  replayfn.Build,
	"ReconcilerFunction": reconcilerfn.Build,
	// Only with the template parameter StripeEventBridgeSource set.
	"StripeEventBridgeFunction": eventbridge.Build,
}

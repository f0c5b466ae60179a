// Package catalog maps each AWS::Serverless::Function of template.yaml to
// the builder its main runs (receiverfn, processorfn, replayfn,
// reconcilerfn, eventbridgefn), for `hookinbox dev` and the tests, which
// build every function in-process as Lambda runs it. It links every
// function, so it is behind the fence: no function's bootstrap imports it.
// Its tests hold the link rules.
package catalog

import (
	"github.com/hookinbox/hookinbox/eventbridgefn"
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/processorfn"
	"github.com/hookinbox/hookinbox/receiverfn"
	"github.com/hookinbox/hookinbox/reconcilerfn"
	"github.com/hookinbox/hookinbox/replayfn"
)

// Builders maps each function's logical ID in template.yaml to its
// builder: what its main in functions/ runs.
var Builders = map[string]lambdafn.Builder{
	"ReceiverFunction":   receiverfn.Builder(),
	"ProcessorFunction":  processorfn.Builder(shop.FromEnvIfSet),
	"DlqReplayFunction":  replayfn.Builder(),
	"ReconcilerFunction": reconcilerfn.Builder(),
	// Only with the template parameter StripeEventBridgeSource set.
	"StripeEventBridgeFunction": eventbridgefn.Builder(),
}

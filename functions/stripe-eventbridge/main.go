// Command stripe-eventbridge is the Lambda that a Stripe event
// destination on Amazon EventBridge invokes (template parameter
// StripeEventBridgeSource): it claims each Stripe event through the
// receiver's intake. Its wiring lives in internal/lambdafn/stripebridgefn.
package main

import (
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/stripebridgefn"
)

func main() { lambdafn.Main(stripebridgefn.Build) }

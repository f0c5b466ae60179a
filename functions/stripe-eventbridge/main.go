// Command stripe-eventbridge is the Lambda that a Stripe event
// destination on Amazon EventBridge invokes (template parameter
// StripeEventBridgeSource): it claims each Stripe event through the
// receiver's intake. It lives in provider/stripe/eventbridge.
package main

import (
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/provider/stripe/eventbridge"
)

func main() { lambdafn.Main(eventbridge.Build) }

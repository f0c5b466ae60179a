// Command stripe-eventbridge is the Lambda that a Stripe event
// destination on Amazon EventBridge invokes (template parameter
// StripeEventBridgeSource): it claims each Stripe event through the
// receiver's intake.
package main

import "github.com/hookinbox/hookinbox/eventbridgefn"

func main() { eventbridgefn.Run() }

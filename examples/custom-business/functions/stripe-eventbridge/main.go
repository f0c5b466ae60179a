// Command stripe-eventbridge is this module's Stripe EventBridge Lambda:
// hookinbox's, which claims the events of a Stripe event destination on
// Amazon EventBridge.
package main

import "github.com/hookinbox/hookinbox/eventbridgefn"

func main() { eventbridgefn.Run() }

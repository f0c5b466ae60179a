// Command reconciler is the scheduled Lambda (EventBridge, every 5 minutes)
// that re-enqueues claims stuck in RECEIVED or FAILED and pulls the Stripe
// events that never arrived as webhooks. Its wiring lives in
// internal/lambdafn/reconcilerfn, so `hookinbox dev` and the tests run the
// same code.
package main

import (
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/reconcilerfn"
)

func main() { lambdafn.Main(reconcilerfn.Build) }

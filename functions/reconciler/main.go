// Command reconciler is the scheduled Lambda (EventBridge, every 5 minutes)
// that re-enqueues claims stuck in RECEIVED or FAILED and claims what
// hookinbox's providers have and never delivered: reconcilerfn.Run, as a
// team's own reconciler main is.
package main

import "github.com/hookinbox/hookinbox/reconcilerfn"

func main() { reconcilerfn.Run() }

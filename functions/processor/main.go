// Command processor is the SQS-triggered Lambda that runs each event's
// business effects once, with the example shop as its business where its
// table is set (shop.FromEnvIfSet), and delivers to the destinations
// DESTINATIONS configures. A team's processor main is the same line with
// its own BusinessBuilder (examples/custom-business).
package main

import (
	"github.com/hookinbox/hookinbox/internal/shop"
	"github.com/hookinbox/hookinbox/processorfn"
)

func main() { processorfn.Run(shop.FromEnvIfSet) }

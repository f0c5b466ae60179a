// Command dlq-replay is this module's replay Lambda: hookinbox's, which
// sends parked events back to the processor.
package main

import "github.com/hookinbox/hookinbox/replayfn"

func main() { replayfn.Run() }

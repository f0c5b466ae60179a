// Command dlq-replay is the Lambda that sends parked events back to the
// processor: the whole DLQ, a filtered part of it, or events by key, with a
// dry run. Invoke it from the console's Test tab with one of the events in
// event*.json (see docs/operations.md).
package main

import "github.com/hookinbox/hookinbox/replayfn"

func main() { replayfn.Run() }

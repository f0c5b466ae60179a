// Command dlq-replay is the Lambda that sends parked events back to the
// processor: the whole DLQ, a filtered part of it, or events by key, with a
// dry run. Invoke it from the console's Test tab with one of the events in
// event*.json (see docs/operations.md). Its wiring lives in
// internal/lambdafn/replayfn, so `hookinbox replay` and the tests run the
// same code.
package main

import (
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/replayfn"
)

func main() { lambdafn.Main(replayfn.Build) }

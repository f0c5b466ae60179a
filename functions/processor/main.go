// Command processor is the SQS-triggered Lambda that runs each event's
// business effects once. Its wiring lives in internal/lambdafn/processorfn,
// so `hookinbox dev` and the tests run exactly the same handler.
package main

import (
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/processorfn"
)

func main() { lambdafn.Main(processorfn.Build) }

// Command receiver is the webhook receiver Lambda (API Gateway HTTP API,
// payload v2). Its wiring lives in internal/lambdafn/receiverfn, so
// `hookinbox dev` and the tests run exactly the same handler.
package main

import (
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/lambdafn/receiverfn"
)

func main() { lambdafn.Main(receiverfn.Build) }

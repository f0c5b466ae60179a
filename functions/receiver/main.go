// Command receiver is the webhook receiver Lambda (API Gateway HTTP API,
// payload v2). Its wiring lives in internal/lambdafn, so `hookinbox dev`
// and the tests run exactly the same handler.
package main

import "github.com/hookinbox/hookinbox/internal/lambdafn"

func main() { lambdafn.Main(lambdafn.Receiver) }

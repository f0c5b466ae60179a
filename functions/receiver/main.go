// Command receiver is the webhook receiver Lambda (API Gateway HTTP API,
// payload v2) of hookinbox's providers: receiverfn.Run, as a team's own
// receiver main is.
package main

import "github.com/hookinbox/hookinbox/receiverfn"

func main() { receiverfn.Run() }

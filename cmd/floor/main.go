// Command floor is the floor program's Lambda bootstrap (internal/local/floor):
// one conditional PutItem and one SendMessage per request. It is the
// baseline the receiver's bootstrap is measured against (cold start under
// aws-lambda-rie, size); no template function deploys it. make build-floor
// builds it as the functions are built, into bin/floor/bootstrap.
package main

import (
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/local/floor"
)

func main() { lambdafn.Main(floor.Build) }

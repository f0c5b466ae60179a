// Command floor is the floor program's Lambda bootstrap (internal/local/floor):
// one conditional PutItem and one SendMessage per request. It is the
// baseline the receiver's bootstrap is measured against (cold start under
// aws-lambda-rie, size); no template function deploys it. Build it as the
// functions are built:
//
//	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o bin/floor/bootstrap ./cmd/floor
package main

import (
	"github.com/hookinbox/hookinbox/internal/lambdafn"
	"github.com/hookinbox/hookinbox/internal/local/floor"
)

func main() { lambdafn.Main(floor.Build) }

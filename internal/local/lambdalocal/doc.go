// Package lambdalocal runs hookinbox's functions the way AWS wires them,
// without AWS: an SQS event source mapping (batch size, batching window,
// partial batch responses), an HTTP API that turns requests into API
// Gateway payload v2 events, and a schedule. Functions are Invokers: the
// in-process handler (through aws-lambda-go's own JSON handler) or a real
// bootstrap binary under the Lambda Runtime Interface Emulator.
//
// The same handler code runs here, in Lambda and in tests: what runs
// locally is what is deployed.
// Everything here is safe for concurrent use and stops when its context is
// cancelled.
package lambdalocal

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Invoker invokes one function with a JSON payload and returns its JSON
// result, as the Lambda Invoke API does. *devstack.Function is one.
type Invoker interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// InProcess returns an Invoker for a handler function with any signature
// lambda.Start accepts, serializing through JSON exactly as Lambda does,
// each invocation with a fresh request id in its context, as Lambda gives.
func InProcess(handler any) Invoker { return inProcess{lambda.NewHandler(handler)} }

type inProcess struct{ h lambda.Handler }

func (p inProcess) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var id [16]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails
	lc := &lambdacontext.LambdaContext{AwsRequestID: fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:])}
	return p.h.Invoke(lambdacontext.NewContext(ctx, lc), payload)
}

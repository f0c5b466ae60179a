// Command echo is a Lambda function for devstack's tests: it returns its
// input, with the value of the environment variable named by "env" under
// "envValue", and fails when the input has "fail".
package main

import (
	"context"
	"errors"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

func handle(_ context.Context, in map[string]any) (map[string]any, error) {
	if msg, ok := in["fail"].(string); ok {
		return nil, errors.New(msg)
	}
	if name, ok := in["env"].(string); ok {
		in["envValue"] = os.Getenv(name)
	}
	return in, nil
}

func main() {
	lambda.Start(handle)
}

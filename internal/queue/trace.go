package queue

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// AttrTrace is the SQS system attribute that carries an X-Ray trace header
// from sender to receiver, so one event is one trace from the receiver,
// through the queue, to the processor and its effects.
const AttrTrace = "AWSTraceHeader"

// traceKey is the context key of a trace header set by WithTrace.
type traceKey struct{}

// lambdaTraceKey is where aws-lambda-go keeps the invocation's trace
// header in the handler's context.
const lambdaTraceKey = "x-amzn-trace-id"

// WithTrace returns ctx carrying the X-Ray trace header h (for the
// processor: the AWSTraceHeader of the message it works on), which Send
// and Park then pass on. An empty h leaves ctx as it is.
func WithTrace(ctx context.Context, h string) context.Context {
	if h == "" {
		return ctx
	}
	return context.WithValue(ctx, traceKey{}, h)
}

// Trace returns the trace header messages sent under ctx carry: the one
// set by WithTrace, or else the Lambda invocation's; "" when there is none
// or it is not an X-Ray header ("Root=...").
func Trace(ctx context.Context) string {
	h, _ := ctx.Value(traceKey{}).(string)
	if h == "" {
		h, _ = ctx.Value(lambdaTraceKey).(string)
	}
	if !strings.HasPrefix(h, "Root=") || len(h) > 1024 {
		return ""
	}
	return h
}

// TraceRoot returns the Root=... part of a trace header, the trace ID
// logged with each event.
func TraceRoot(h string) string {
	root, _, _ := strings.Cut(h, ";")
	return strings.TrimPrefix(root, "Root=")
}

// traceAttributes returns the system attributes that carry ctx's trace,
// or nil.
func traceAttributes(ctx context.Context) map[string]types.MessageSystemAttributeValue {
	h := Trace(ctx)
	if h == "" {
		return nil
	}
	return map[string]types.MessageSystemAttributeValue{
		AttrTrace: {DataType: aws.String("String"), StringValue: aws.String(h)},
	}
}

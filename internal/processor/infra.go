package processor

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/hookinbox/hookinbox/webhook"
)

// DefaultMaxInfraFailures is Config.MaxInfraFailures's default: with the
// default backoff (10 s doubling to 15 min, each wait between half and
// all of its ceiling) an event rides out about 2 to 4 hours of an
// unavailable store before it is parked.
const DefaultMaxInfraFailures = 20

// infraServices are the services hookinbox keeps its own state in: the
// inbox, the effect ledger and the business records (DynamoDB), the
// queues (SQS). A business API (Stripe, SES) is not among them: its
// failures are the event's tries.
var infraServices = map[string]bool{"DynamoDB": true, "SQS": true}

// infrastructure reports whether err is the infrastructure's failure
// rather than the event's: a DynamoDB or SQS call that got no answer (a
// timeout, a reset, a refused connection, the invocation's deadline), or
// was answered with a throttle or a 5xx. Such an attempt says nothing of
// the event, so it does not use up the event's tries (Config.MaxInfraFailures
// bounds them instead). A DynamoDB or SQS refusal of the request itself (a
// validation error, a missing table, access denied) is not: it does not
// pass by waiting, and the event is parked after its tries as usual.
func infrastructure(err error) bool {
	if err == nil || webhook.IsPermanent(err) {
		return false
	}
	var op *smithy.OperationError
	if !errors.As(err, &op) || !infraServices[op.ServiceID] {
		return false
	}
	// No answer: the request timed out, was reset or refused. The SDK
	// wraps a send that failed in a response error of status 0.
	var sendErr *smithyhttp.RequestSendError
	if errors.As(err, &sendErr) {
		return true
	}
	var answered interface{ HTTPStatusCode() int }
	if !errors.As(err, &answered) || answered.HTTPStatusCode() == 0 {
		return true
	}
	code := ""
	var api smithy.APIError
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	return unavailable(answered.HTTPStatusCode(), code)
}

// unavailable reports whether an answer says the service could not serve
// the request now: a 5xx, a throttle, a request timeout, or credentials
// that expired (the next invocation gets fresh ones).
func unavailable(status int, code string) bool {
	if status >= 500 || code == "ExpiredToken" || code == "ExpiredTokenException" {
		return true
	}
	_, throttled := retry.DefaultThrottleErrorCodes[code]
	_, timedOut := retry.DefaultRetryableErrorCodes[code]
	return throttled || timedOut
}

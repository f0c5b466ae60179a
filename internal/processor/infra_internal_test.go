package processor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/hookinbox/hookinbox/webhook"
)

// sdkError is what an AWS SDK client returns: the operation, the retryer's
// give-up, and the last attempt's error.
func sdkError(service string, last error) error {
	return &smithy.OperationError{ServiceID: service, OperationName: "PutItem",
		Err: &retry.MaxAttemptsError{Attempt: 3, Err: last}}
}

// answered is an SDK error answer with an HTTP status and an error code.
func answered(status int, code string) error {
	return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      &smithy.GenericAPIError{Code: code, Message: "test"},
	}}
}

func TestInfrastructureErrors(t *testing.T) {
	timeout := errors.New("read tcp 127.0.0.1:1->127.0.0.1:2: i/o timeout")
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"inbox store: no answer", sdkError("DynamoDB", &smithyhttp.RequestSendError{Err: timeout}), true},
		{"inbox store: 500", sdkError("DynamoDB", answered(500, "InternalServerError")), true},
		{"inbox store: throttled", sdkError("DynamoDB", answered(400, "ProvisionedThroughputExceededException")), true},
		{"inbox store: wrapped", fmt.Errorf("load payload: %w", sdkError("DynamoDB", &smithyhttp.RequestSendError{Err: timeout})), true},
		// What the SDK returns when the invocation's deadline ends its
		// wait before a retry: the operation, canceled.
		{"inbox store: deadline while waiting to retry", sdkError("DynamoDB", &smithy.CanceledError{Err: context.DeadlineExceeded}), true},
		// What the SDK returns when a connection closes before any answer,
		// after its retries: a response error of status 0 around the send.
		{"inbox store: connection closed, retries spent", sdkError("DynamoDB", &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{}}, Err: &smithyhttp.RequestSendError{Err: io.EOF}}}), true},
		{"inbox store: expired credentials", sdkError("DynamoDB", answered(400, "ExpiredTokenException")), true},
		{"inbox store: access denied", sdkError("DynamoDB", answered(400, "AccessDeniedException")), false},
		{"inbox store: validation", sdkError("DynamoDB", answered(400, "ValidationException")), false},
		{"inbox store: condition", sdkError("DynamoDB", answered(400, "ConditionalCheckFailedException")), false},
		{"secrets: 500", sdkError("Secrets Manager", answered(500, "InternalFailure")), false},
		{"ledger: no answer", fmt.Errorf("record effect: %w", sdkError("DynamoDB", &smithyhttp.RequestSendError{Err: timeout})), true},
		{"ledger: 503", sdkError("DynamoDB", answered(503, "ServiceUnavailable")), true},
		{"ledger: throttled", sdkError("DynamoDB", answered(400, "ThrottlingException")), true},
		{"ledger: missing table", sdkError("DynamoDB", answered(400, "ResourceNotFoundException")), false},
		{"sqs: 500", sdkError("SQS", answered(500, "InternalError")), true},
		{"SES (a business API): 503", sdkError("SESv2", answered(503, "ServiceUnavailable")), false},
		{"SES: no answer", sdkError("SESv2", &smithyhttp.RequestSendError{Err: timeout}), false},
		{"Stripe 500", errors.New("stripe: POST /v1/invoices: 500"), false},
		{"permanent", webhook.Permanent(sdkError("DynamoDB", answered(503, "ServiceUnavailable"))), false},
		{"nil", nil, false},
	} {
		if got := infrastructure(tc.err); got != tc.want {
			t.Errorf("%s: infrastructure(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

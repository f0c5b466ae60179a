package processor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/hookinbox/hookinbox/internal/platform/awsapi"
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
		{"inbox store: no answer", &awsapi.SendError{Service: "DynamoDB", Operation: "UpdateItem", Attempts: 3, Err: timeout}, true},
		{"inbox store: 500", &awsapi.Error{Service: "DynamoDB", Operation: "UpdateItem", Code: "InternalServerError", StatusCode: 500}, true},
		{"inbox store: throttled", &awsapi.Error{Service: "DynamoDB", Operation: "UpdateItem", Code: "ProvisionedThroughputExceededException", StatusCode: 400}, true},
		{"inbox store: wrapped", fmt.Errorf("load payload: %w", &awsapi.SendError{Service: "DynamoDB", Err: timeout}), true},
		// What awsapi returns when the invocation's deadline ends its wait
		// before a retry: the deadline and the last answer, both wrapped.
		{"inbox store: deadline while waiting to retry a 500", fmt.Errorf("DynamoDB UpdateItem: %w (waiting to retry after 2 attempts: %w)", context.DeadlineExceeded,
			&awsapi.Error{Service: "DynamoDB", Operation: "UpdateItem", Code: "InternalServerError", StatusCode: 500}), true},
		{"inbox store: validation", &awsapi.Error{Service: "DynamoDB", Operation: "UpdateItem", Code: "ValidationException", StatusCode: 400}, false},
		{"inbox store: condition", &awsapi.Error{Service: "DynamoDB", Code: "ConditionalCheckFailedException", StatusCode: 400}, false},
		{"secrets: 500", &awsapi.Error{Service: "Secrets Manager", Code: "InternalFailure", StatusCode: 500}, false},
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

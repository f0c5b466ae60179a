package destination

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/hookinbox/hookinbox/webhook"
)

type putEventsFn func(*eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error)

func (f putEventsFn) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	return f(in)
}

// apiError is an AWS error answered with status and code.
func apiError(status int, code string) error {
	return &smithy.OperationError{ServiceID: "EventBridge", OperationName: "PutEvents", Err: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      &smithy.GenericAPIError{Code: code},
	}}
}

func failedEntry(code string) (*eventbridge.PutEventsOutput, error) {
	return &eventbridge.PutEventsOutput{FailedEntryCount: 1, Entries: []types.PutEventsResultEntry{{ErrorCode: aws.String(code)}}}, nil
}

// TestBusAnswers: how each PutEvents answer is classified.
func TestBusAnswers(t *testing.T) {
	tests := []struct {
		name string
		put  putEventsFn
		kind error // nil: delivered
	}{
		{"put", func(*eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error) {
			return &eventbridge.PutEventsOutput{Entries: []types.PutEventsResultEntry{{EventId: aws.String("e-1")}}}, nil
		}, nil},
		{"entry throttled", func(*eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error) {
			return failedEntry("ThrottlingException")
		}, ErrRetry},
		{"entry internal failure", func(*eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error) {
			return failedEntry("InternalFailure")
		}, ErrRetry},
		{"entry malformed", func(*eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error) {
			return failedEntry("MalformedDetail")
		}, ErrRefused},
		{"500", func(*eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error) {
			return nil, apiError(500, "InternalException")
		}, ErrRetry},
		{"throttled", func(*eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error) {
			return nil, apiError(400, "ThrottlingException")
		}, ErrRetry},
		{"no answer", func(*eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error) {
			return nil, errors.New("dial tcp: i/o timeout")
		}, ErrRetry},
		{"access denied", func(*eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error) {
			return nil, apiError(400, "AccessDeniedException")
		}, ErrRefused},
	}
	ev := webhook.Event{Provider: "stripe", ID: "evt_1", Type: "invoice.paid", Raw: []byte(`{}`)}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &busDestination{cfg: Config{Name: "bus", Bus: "orders"}, client: tt.put}
			_, err := d.send(context.Background(), ev, newBody(ev, "bus"))
			if (tt.kind == nil) != (err == nil) || (tt.kind != nil && !errors.Is(err, tt.kind)) {
				t.Errorf("send = %v; want %v", err, tt.kind)
			}
		})
	}
}

// TestBusDetailKeepsThePayloadBytes: the entry's detail is valid JSON, the
// body every destination gets, with the provider's bytes in it unchanged.
func TestBusDetailKeepsThePayloadBytes(t *testing.T) {
	for name, raw := range payloads {
		t.Run(name, func(t *testing.T) {
			var detail string
			d := &busDestination{cfg: Config{Name: "bus", Bus: "orders"}, client: putEventsFn(func(in *eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error) {
				detail = aws.ToString(in.Entries[0].Detail)
				return &eventbridge.PutEventsOutput{Entries: []types.PutEventsResultEntry{{EventId: aws.String("e-1")}}}, nil
			})}
			ev := webhook.Event{Provider: "shopify", ID: "d-1", Type: "orders/paid", Raw: []byte(raw)}
			if _, err := d.send(context.Background(), ev, newBody(ev, "bus")); err != nil {
				t.Fatal(err)
			}
			if !json.Valid([]byte(detail)) {
				t.Fatalf("detail is not JSON: %s", detail)
			}
			if !strings.HasSuffix(detail, `"payload":`+raw+`}`) {
				t.Errorf("detail = %q; want it to end with the payload's bytes and }", detail)
			}
		})
	}
}

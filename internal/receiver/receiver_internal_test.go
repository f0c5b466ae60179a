package receiver

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/hookinbox/hookinbox/internal/intake"
	"github.com/hookinbox/hookinbox/provider"
	"github.com/hookinbox/hookinbox/webhook"
)

func TestProviderName(t *testing.T) {
	tests := []struct {
		name string
		req  events.APIGatewayV2HTTPRequest
		want string
	}{
		{"path parameter", events.APIGatewayV2HTTPRequest{PathParameters: map[string]string{"provider": "stripe"}}, "stripe"},
		{"fixed route", gopayRoute("/webhooks/gopay"), "gopay"},
		{"parameter wins", events.APIGatewayV2HTTPRequest{PathParameters: map[string]string{"provider": "stripe"},
			RequestContext: gopayRoute("/webhooks/gopay").RequestContext}, "stripe"},
	}
	for _, tt := range tests {
		if got := providerName(tt.req); got != tt.want {
			t.Errorf("%s: providerName = %q; want %q", tt.name, got, tt.want)
		}
	}
}

func gopayRoute(path string) events.APIGatewayV2HTTPRequest {
	var req events.APIGatewayV2HTTPRequest
	req.RequestContext.HTTP.Path = path
	return req
}

func TestAcceptedResponse(t *testing.T) {
	json := func(body string) events.APIGatewayV2HTTPResponse {
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Headers: map[string]string{"content-type": "application/json"}, Body: body}
	}
	tests := []struct {
		name    string
		p       Provider
		outcome map[webhook.Key]intake.Outcome
		want    events.APIGatewayV2HTTPResponse
	}{
		{"new", Provider{}, map[webhook.Key]intake.Outcome{"a#1": intake.Accepted}, json(`{"status":"accepted"}`)},
		{"duplicate", Provider{}, map[webhook.Key]intake.Outcome{"a#1": intake.Duplicate}, json(`{"status":"duplicate"}`)},
		{"a batch with one new", Provider{}, map[webhook.Key]intake.Outcome{"a#1": intake.Duplicate, "a#2": intake.Accepted}, json(`{"status":"accepted"}`)},
		{"the provider's own text", Provider{Webhook: provider.Webhook{Accepted: "[accepted]"}}, map[webhook.Key]intake.Outcome{"a#1": intake.Duplicate},
			events.APIGatewayV2HTTPResponse{StatusCode: 200, Headers: map[string]string{"content-type": "text/plain"}, Body: "[accepted]"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, acceptedResponse(tt.p, tt.outcome)); diff != "" {
			t.Errorf("%s: acceptedResponse (-want +got):\n%s", tt.name, diff)
		}
	}
}
